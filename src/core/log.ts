/** Operational log lines (health transitions, discovery problems, upstream failures). */
export type OperationalLog = (level: "info" | "warn", message: string) => void;

/** The default operational log: `[llmd <component>] <level>: <message>` lines on stderr. */
export function stderrLog(component: string): OperationalLog {
  return (level, message) => process.stderr.write(`[llmd ${component}] ${level}: ${message}\n`);
}
