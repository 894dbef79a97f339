import { Type } from 'typebox';
import { Uuid } from '../../app/schemas.js';

export const Workspace = Type.Object({
  id: Uuid(),
  name: Type.Optional(Type.String()),
  role: Type.Optional(Type.Union([Type.Literal('owner'), Type.Literal('admin'), Type.Literal('member')])),
});

export const ListWorkspacesResponse = Type.Object({ workspaces: Type.Array(Workspace) });
