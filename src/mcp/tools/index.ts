import { authoringTools } from './authoring.tools.js';
import { playsTools } from './plays.tools.js';
import { repliesTools } from './replies.tools.js';
import { reportingTools } from './reporting.tools.js';
import { sequencesTools } from './sequences.tools.js';
import type { Tool } from './types.js';
import { xTools } from './x.tools.js';

export type { Tool, ToolContext } from './types.js';

/** Every tool the server knows, authoring first; the order is the order tools/list answers. */
export const ALL_TOOLS: readonly Tool[] = [...authoringTools, ...xTools, ...playsTools, ...sequencesTools, ...reportingTools, ...repliesTools];

