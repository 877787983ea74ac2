/**
 * The analysis entry point the front ends import: the project layer (src/core/project/) binds
 * templates to their configs and fixtures, analyses files and checks whole trees.
 */
export * from './project';
export type { ConfigBinding as Binding } from './project';
export { templateFormat, templateGlobs } from './language';
