// What a command may use: output, the configuration, the database, the services and questions on
// the terminal. Each is opened lazily, so that --help and key:generate work without a database
// or even a valid configuration (key:generate is how an invalid APP_KEY gets fixed).
import type { Readable } from 'node:stream';
import { loadConfig, readEnv, type Config } from '../config.js';
import { connect, type Db } from '../db/connect.js';
import { createServices, type Services } from '../services.js';
import { Prompter } from './prompt.js';

export type CliContext = {
  stdout: NodeJS.WritableStream;
  stderr: NodeJS.WritableStream;
  stdin: Readable;
  /** Whether missing values may be asked for; by default, when stdin is a terminal. */
  interactive?: boolean;
  /** An open database (tests); otherwise one is opened from the configuration and closed after. */
  db?: Db;
  /** The configuration; otherwise loadConfig(readEnv()), read only by commands that need it. */
  config?: Config;
  /** Where key:generate --write finds .env; the working directory by default. */
  cwd?: string;
};

export class Runtime {
  private openedDb: Db | null = null;
  private loadedConfig: Config | undefined;
  private prompter: Prompter | null = null;
  private builtServices: Services | null = null;

  constructor(readonly ctx: CliContext) {
    this.loadedConfig = ctx.config;
  }

  out(line: string): void {
    this.ctx.stdout.write(`${line}\n`);
  }

  get interactive(): boolean {
    return this.ctx.interactive ?? (this.ctx.stdin as { isTTY?: boolean }).isTTY === true;
  }

  config(): Config {
    this.loadedConfig ??= loadConfig(readEnv());
    return this.loadedConfig;
  }

  /** DATABASE_URL once the configuration is read (to name the database in an error). */
  get databaseUrl(): string | undefined {
    return this.loadedConfig?.databaseUrl;
  }

  db(): Db {
    if (this.ctx.db !== undefined) return this.ctx.db;
    // Commands are not requests: no per-statement timeouts (a migration may build a large index).
    this.openedDb ??= connect(this.config().databaseUrl, { requestTimeouts: false });
    return this.openedDb;
  }

  services(): Services {
    this.builtServices ??= createServices(this.db(), this.config());
    return this.builtServices;
  }

  ask(question: string, hidden = false): Promise<string> {
    this.prompter ??= new Prompter({ input: this.ctx.stdin, output: this.ctx.stdout, terminal: this.interactive });
    return this.prompter.ask(question, { hidden });
  }

  async close(): Promise<void> {
    this.prompter?.close();
    // The services may hold a Redis connection (the throttles'); left open it would keep the process alive.
    if (this.builtServices !== null) await this.builtServices.close();
    if (this.openedDb !== null) await this.openedDb.close();
  }
}
