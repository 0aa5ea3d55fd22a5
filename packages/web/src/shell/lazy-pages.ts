/*
 * Every page but the dashboard, in one chunk loaded when one of them is first shown
 * (src/shell/routes.tsx): the home page paints without their code (the graph layout, cron words,
 * the editor). One chunk rather than one per page: the small components they share would
 * otherwise become chunks of a few hundred bytes, each a request and too small to compress.
 */
export { DagListPage } from '../pages/dag-list/dag-list-page';
export { DagPage } from '../pages/dag/dag-page';
export { NewDagPage } from '../pages/new-dag/new-dag-page';
export { QueuesPage } from '../pages/queues-page';
export { RunPage } from '../pages/run/run-page';
export { RunsPage } from '../pages/runs/runs-page';
export { WorkersPage } from '../pages/workers-page';
