/** The web strings of one language, split by the build (vite.config.ts): `first` for a first visit, `more` the rest. */
declare module 'virtual:herald-strings/*' {
  const strings: Record<string, string>;
  export default strings;
}
