// Questions asked on a terminal by CLI commands (admin:create). One readline interface serves
// every question, so answers typed (or piped) ahead of a question are queued, never lost.
import { createInterface, type Interface } from 'node:readline';
import { Writable, type Readable } from 'node:stream';

export type PromptStreams = {
  input: Readable;
  output: NodeJS.WritableStream;
  /** True when input is a terminal: raw mode, so a hidden answer is not echoed by the tty. */
  terminal: boolean;
};

/** Raised when the input ends (Ctrl+D) or the user presses Ctrl+C before answering. */
export class PromptAborted extends Error {}

export class Prompter {
  private readonly rl: Interface;
  private readonly lines: AsyncIterator<string>;
  private muted = false;
  // Input that ends ahead of the questions (answers piped or typed ahead, then EOF) closes the
  // interface while its lines are still queued; from Node 24 on, prompting a closed interface
  // throws, so the question is then written directly.
  private closed = false;

  constructor(private readonly streams: PromptStreams) {
    // In terminal mode readline echoes what is typed itself (the tty's echo is off in raw mode);
    // routing its output through this gate is what keeps a password off the screen.
    const gate = new Writable({
      write: (chunk: Buffer | string, _encoding, done) => {
        if (!this.muted) streams.output.write(chunk);
        done();
      },
    });
    this.rl = createInterface({ input: streams.input, output: gate, terminal: streams.terminal });
    // Ctrl+C in raw mode reaches readline, not the process: end the questions instead of hanging.
    this.rl.on('SIGINT', () => this.rl.close());
    this.rl.on('close', () => (this.closed = true));
    this.lines = this.rl[Symbol.asyncIterator]();
  }

  /** Asks one question and returns the answer line; `hidden` answers are never echoed. */
  async ask(question: string, options: { hidden?: boolean } = {}): Promise<string> {
    if (this.closed) {
      this.streams.output.write(question);
    } else {
      this.rl.setPrompt(question);
      this.rl.prompt();
    }
    this.muted = options.hidden === true;
    try {
      const next = await this.lines.next();
      if (next.done === true) throw new PromptAborted('Aborted: no answer was given.');
      return next.value;
    } finally {
      if (this.muted) {
        this.muted = false;
        // The Enter key's echo was muted with the rest of the answer.
        if (this.streams.terminal) this.streams.output.write('\n');
      }
    }
  }

  close(): void {
    this.rl.close();
  }
}
