// The authoring module's public face: code outside src/modules/authoring imports from here only.
export { createAuthoringService, type AuthoringService } from './authoring.service.js';
// The tools' input and output schemas (the agent-tool server is authoring's only caller outside the module).
export * from './authoring.schemas.js';
