// The tasks module's public face: code outside src/modules/tasks imports from here only.
export {
  createTasksService,
  type TasksService,
  type TaskView,
  type ListTasksInput,
  type StepTaskRecorder,
  type ReplyTaskRecorder,
  type ReplyTaskInput,
} from './tasks.service.js';
export { tasksRoutes } from './tasks.routes.js';
export { CloseTaskBody, CloseTaskResponse, TaskIdParams, TasksQuery, TasksResponse, TASK_KINDS, TASK_SOURCES, TASKS_LIMIT_DEFAULT } from './tasks.schemas.js';
