import { agreementCommand } from './agreement.js';
import { calibrateCommand } from './calibrate.js';
import type { Command } from './command.js';
import { compareCommand } from './compare.js';
import { doctorCommand } from './doctor.js';
import { embedCommand } from './embed.js';
import { goldensCommand } from './goldens.js';
import { initCommand } from './init.js';
import { mergeCommand } from './merge.js';
import { mineCommand } from './mine.js';
import { judgeCommand } from './judge.js';
import { labelCommand } from './label.js';
import { matrixCommand } from './matrix.js';
import { poolCommand } from './pool.js';
import { probeCommand } from './probe.js';
import { reportCommand } from './report.js';
import { retrievalCommand } from './retrieval.js';
import { runCommand } from './run.js';
import { trecCommand } from './trec.js';

/** Every command, in the order `ragaudit --help` lists them. */
export const COMMANDS: Command[] = [
  runCommand,
  retrievalCommand,
  probeCommand,
  trecCommand,
  calibrateCommand,
  matrixCommand,
  judgeCommand,
  poolCommand,
  labelCommand,
  goldensCommand,
  mineCommand,
  agreementCommand,
  compareCommand,
  reportCommand,
  mergeCommand,
  doctorCommand,
  initCommand,
  embedCommand,
];
