export * from './status/index.js';
export * from './errors/app-error.js';
export * from './ports/clock.js';
export * from './ports/id-generator.js';
export * from './ports/process-runner.js';
export * from './config/index.js';
export * from './paths/home.js';
export * from './events/event-names.js';
