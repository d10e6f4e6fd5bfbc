/** The Russian strings of every page but the overview and the login (see first-visit.ts): loaded with such a page. */
import strings from 'virtual:herald-strings/ru/more';

export default [strings];
