import { authoringTools } from './authoring.tools.js';
import { playsTools } from './plays.tools.js';
import { meetingsTools } from './meetings.tools.js';
import { repliesTools } from './replies.tools.js';
import { reportingTools } from './reporting.tools.js';
import { sequencesTools } from './sequences.tools.js';
import { tasksTools } from './tasks.tools.js';
import { outputSchemaTool } from './output-schema.tool.js';
import type { Tool } from './types.js';
import { xTools } from './x.tools.js';

export type { Tool, ToolContext } from './types.js';

const OPERATING_TOOLS: readonly Tool[] = [
  ...authoringTools,
  ...xTools,
  ...playsTools,
  ...sequencesTools,
  ...reportingTools,
  ...repliesTools,
  ...meetingsTools,
  ...tasksTools,
];

/** Every tool the server knows, authoring first; the order is the order tools/list answers. */
export const ALL_TOOLS: readonly Tool[] = [...OPERATING_TOOLS, outputSchemaTool(OPERATING_TOOLS)];

/**
 * Names tools had before one scheme (verb_noun; a channel qualifier only where another channel has the same noun)
 * was applied throughout. Still callable, never listed in tools/list; docs/mcp.md records the rename.
 */
export const DEPRECATED_TOOL_NAMES: Readonly<Record<string, string>> = { get_x_lead: 'get_lead', stop_x_lead: 'stop_lead' };
