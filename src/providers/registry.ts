/**
 * The shape of a provider registry: per provider its name (the registry key, which is what a
 * config's `provider:` and a flag's `PROVIDER:` accept), a one-line help text, whether it is an
 * offline stand-in, the environment variables its settings fall back to, and its factory.
 * `chat.ts`, `rerankers.ts` and `embedders.ts` hold one registry each; the config schema takes
 * its provider enums from them, the runner its factories, `--help` its provider lists.
 */

/** What every component of a run says of itself: the id recorded in results, and whether it is an offline stand-in. */
export interface Component {
  readonly id: string;
  readonly offline: boolean;
}

/**
 * Environment variables a provider's settings fall back to when the config leaves them unset,
 * applied in one place (`settingsFromEnv`, `env.ts`) with the environment passed in.
 */
export interface ProviderEnv {
  /** The variable `base_url` falls back to. */
  base_url?: string;
  /** The variable `api_key` falls back to. */
  api_key?: string;
  /**
   * When set, the key variable is sent only to the host it belongs to: the `base_url` variable's
   * host, or this URL's when that variable is unset. A `base_url` on another host gets no key
   * from the environment.
   */
  key_home?: string;
}

/** One provider of a kind: `S` its settings (a config section), `C` what it builds. */
export interface Provider<S, C extends Component> {
  /** One line: what it is, which settings and environment variables it reads. */
  readonly help: string;
  /** An offline stand-in (not a model): labelled so in every result and on the console. */
  readonly offline: boolean;
  readonly env?: ProviderEnv;
  create(settings: S): C;
  /**
   * Starts loading what `create`'s component will need first (an SDK's module), so that a command
   * can overlap it with opening its database. Optional; `create` works without it.
   */
  preload?(): Promise<unknown>;
}

/** The names of a registry, in its order, as the non-empty tuple `z.enum` takes. */
export function providerNames<K extends string>(registry: Readonly<Record<K, unknown>>): [K, ...K[]] {
  const names = Object.keys(registry).filter((k): k is K => Object.hasOwn(registry, k));
  const [first, ...rest] = names;
  if (first === undefined) throw new Error('a provider registry must name at least one provider');
  return [first, ...rest];
}

/** The provider of a registry named `name` (any string, e.g. from a stored config), or undefined. */
export function findProvider<P>(registry: Readonly<Record<string, P>>, name: string): P | undefined {
  return Object.entries(registry).find(([k]) => k === name)?.[1];
}
