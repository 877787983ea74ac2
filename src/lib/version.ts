/** The package version, inlined by esbuild from package.json (the library follows semver; see docs/library.md). */
import pkg from '../../package.json';

export const VERSION: string = pkg.version;
