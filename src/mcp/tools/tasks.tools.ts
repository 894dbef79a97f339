import { Type } from 'typebox';
import {
  CloseTaskBody,
  CloseTaskResponse,
  TaskIdParams,
  TASKS_LIMIT_DEFAULT,
  TasksQuery,
  TasksResponse,
  type TasksService,
} from '../../modules/tasks/index.js';
import { DryRunFlag, READ_ONLY_SAFETY, defineTool } from './types.js';

// The task queue (docs/tasks.md) for agents. An agent reads it and records what a person did; it never performs a
// platform action: the only path that acts on X for a task is the console's button, pressed by a signed-in person.

const NEVER_ACTS = 'Only a signed-in person, in the console, acts on X.';

const ListInput = Type.Object({ ...TasksQuery.properties }, { additionalProperties: false });
const CloseInput = Type.Object({ taskId: TaskIdParams.properties.id, ...CloseTaskBody.properties, dryRun: DryRunFlag }, { additionalProperties: false });

const closeTool = (name: 'complete_task' | 'skip_task', title: string, what: string) =>
  defineTool<{ tasks: TasksService }, typeof CloseInput>({
    name,
    action: 'tasks.work',
    title,
    description:
      `${what} 404 task not found; 409 task_closed when no longer open. Safety: contacts a prospect: no. Records only, nothing ` +
      `is sent. ${NEVER_ACTS} dryRun: true changes nothing.`,
    input: CloseInput,
    output: CloseTaskResponse,
    dryRun: 'service',
    contactsProspects: false,
    readOnly: false,
    mirrors: { method: 'POST', url: `/api/v1/tasks/:id/${name === 'complete_task' ? 'complete' : 'skip'}`, params: { id: 'taskId' } },
    run: ({ services, auth }, { taskId, by, dryRun }) =>
      name === 'complete_task'
        ? services.tasks.complete(auth.workspaceId, taskId, by ?? 'api', { dryRun })
        : services.tasks.skip(auth.workspaceId, taskId, by ?? 'api', { dryRun }),
  });

export const tasksTools = [
  defineTool<{ tasks: TasksService }, typeof ListInput>({
    name: 'list_tasks',
    action: 'read',
    title: 'List the task queue',
    description:
      'What a person must do where a platform’s rules keep the engine from acting alone: lead, rendered text, profile link. ' +
      `Paged: pass nextCursor as after. ${NEVER_ACTS} ${READ_ONLY_SAFETY}`,
    input: ListInput,
    output: TasksResponse,
    contactsProspects: false,
    readOnly: true,
    mirrors: { method: 'GET', url: '/api/v1/tasks' },
    run: ({ services, auth }, args) => services.tasks.list(auth.workspaceId, { ...args, limit: args.limit ?? TASKS_LIMIT_DEFAULT }),
  }),
  closeTool(
    'complete_task',
    'Record a task as done by a person',
    'Records that the person did it on the platform: the same ledger entry and webhook as the automated step (detail.via task).',
  ),
  closeTool('skip_task', 'Skip a task', 'Records the step skipped; the sequence goes on.'),
];
