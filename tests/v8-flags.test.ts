/**
 * The executable's V8 settings (src/cli/v8-flags.ts), as the flags it hands to V8: node:v8 is
 * replaced here, since a flag set in this process would change the test runner's own V8.
 */
import { beforeEach, describe, expect, it, vi } from 'vitest';

const set = vi.hoisted(() => ({ flags: [] as string[] }));
vi.mock('node:v8', () => ({ setFlagsFromString: (f: string) => void set.flags.push(f) }));

const { applyV8Flags, HEAP_GROWING_PERCENT, INTERRUPT_BUDGET } = await import('../src/cli/v8-flags.js');

describe('the executable’s V8 settings', () => {
  beforeEach(() => {
    set.flags = [];
  });

  it('let the heap grow to twice what a full collection left alive, the baseline compiler for WebAssembly', () => {
    applyV8Flags({}, []);
    expect(HEAP_GROWING_PERCENT).toBe(100);
    expect(set.flags).toEqual([
      '--liftoff-only',
      `--interrupt-budget=${INTERRUPT_BUDGET}`,
      '--heap-growing-percent=100',
    ]);
  });

  it('leave the heap growth to node when it was started with its own, on the command line or in NODE_OPTIONS', () => {
    applyV8Flags({}, ['--heap-growing-percent=300']);
    applyV8Flags({ NODE_OPTIONS: '--max-old-space-size=2048 --heap_growing_percent=50' }, []);
    expect(set.flags.filter((f) => f.startsWith('--heap'))).toEqual([]);
    // A heap limit alone is not a growth setting: the growth is still set.
    applyV8Flags({ NODE_OPTIONS: '--max-old-space-size=2048' }, []);
    expect(set.flags.filter((f) => f.startsWith('--heap'))).toEqual(['--heap-growing-percent=100']);
  });

  it('keep V8’s WebAssembly tiering when asked (RAGAUDIT_WASM_TIER_UP=1)', () => {
    applyV8Flags({ RAGAUDIT_WASM_TIER_UP: '1' }, []);
    expect(set.flags).not.toContain('--liftoff-only');
  });
});
