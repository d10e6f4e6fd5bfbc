/** The English strings of every page but the overview and the login (see first-visit.ts): loaded with such a page. */
import strings from 'virtual:herald-strings/en/more';

export default [strings];
