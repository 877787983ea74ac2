/** The impact report of a change (`ctxlens report`): its schema, the comparison and the renderings. */
export * from './schema';
export * from './compare';
export * from './render';
export * from './agents';
