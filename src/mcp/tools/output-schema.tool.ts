import { Type } from 'typebox';
import { compactSchema } from '../compact-schema.js';
import { READ_ONLY_SAFETY, defineTool, orPreview, type Tool } from './types.js';

/** The JSON Schema of what a tool answers (the route's 200 response, or that or a preview for decide_reply). */
export function toolOutputSchema(tool: Tool): Record<string, unknown> {
  return compactSchema(tool.dryRun === 'preview' ? orPreview(tool.output) : tool.output);
}

/**
 * Output schemas are not part of tools/list: all of them together were three times the size of everything else
 * (the list is read on every connection), while every answer already carries its JSON. An agent that wants a
 * field's meaning before calling a tool asks for that one tool's schema here.
 */
export function outputSchemaTool(tools: readonly Tool[]): Tool {
  const byName = new Map(tools.map((t) => [t.name, t]));
  const Input = Type.Object(
    {
      tool: Type.Enum(
        tools.map((t) => t.name),
        { description: 'the tool whose answer to describe' },
      ),
    },
    { additionalProperties: false },
  );
  return defineTool<unknown, typeof Input>({
    name: 'get_output_schema',
    action: 'read',
    title: 'Describe what a tool answers',
    description:
      'The JSON Schema of one tool’s answer (its structuredContent), with every field’s type, allowed values and meaning. ' +
      `Write tools also answer dryRun (true or false), except decide_reply, whose dry run answers a preview. ${READ_ONLY_SAFETY}`,
    input: Input,
    output: Type.Object({ tool: Type.String(), outputSchema: Type.Unknown() }),
    contactsProspects: false,
    readOnly: true,
    run: async (_ctx, { tool }) => ({ tool, outputSchema: toolOutputSchema(byName.get(tool)!) }),
  });
}
