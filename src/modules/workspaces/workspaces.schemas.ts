import { Type } from 'typebox';
import { OneOf, Uuid } from '../../app/schemas.js';
import { ROLES } from '../../domain/vocabulary.js';

export const Workspace = Type.Object({
  id: Uuid(),
  name: Type.Optional(Type.String()),
  role: Type.Optional(OneOf(ROLES)),
});

export const ListWorkspacesResponse = Type.Object({ workspaces: Type.Array(Workspace) });
