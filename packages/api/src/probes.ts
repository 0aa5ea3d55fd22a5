/**
 * `@trellis/api/probes`: what a server needs before its Express app is loaded (issue 21, start-up):
 * the health probe and its answer, and the JSON 400 for requests Node's parser refuses. Nothing
 * here imports Express, so `trellis start-all` can listen and answer `GET /health` first.
 */
export { answerClientErrors } from './http/client-errors.js';
export {
  createHealthProbe,
  healthAnswer,
  type HealthAnswer,
  type HealthProbeOptions,
  type HealthVerdict,
} from './metrics/health.js';
