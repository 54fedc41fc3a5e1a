import { calibrateCommand } from './calibrate.js';
import type { Command } from './command.js';
import { probeCommand } from './probe.js';
import { retrievalCommand } from './retrieval.js';
import { runCommand } from './run.js';
import { trecCommand } from './trec.js';

/** Every command, in the order `ragaudit --help` lists them. */
export const COMMANDS: Command[] = [runCommand, retrievalCommand, probeCommand, trecCommand, calibrateCommand];
