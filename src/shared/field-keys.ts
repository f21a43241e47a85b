// How users write a field of the wire outside it: as a CLI flag (`--key`) and as a key of
// `[tool.nodereg]` in pyproject.toml. Free of zod, so that the CLI's error path loads nothing more.

/** Fields whose key is not their name in kebab case. */
const FIELD_KEY_ALIASES: Record<string, string> = {
  supported_appui_version: 'requires-app',
  supported_appui_frontend_version: 'requires-app-frontend',
};

export const fieldKey = (field: string): string => FIELD_KEY_ALIASES[field] ?? field.replace(/_/g, '-');
