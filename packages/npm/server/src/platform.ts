// Which mockserver binary runs here: the one in the optional dependency for
// this platform (@mediamock/server-<platform>-<arch>), or MEDIAMOCK_BINARY.
import { existsSync, statSync } from "node:fs";
import { dirname, join } from "node:path";
import { PLATFORMS } from "./generated/platforms";

/** The package of the helper, for error messages. */
export const PACKAGE = "@mediamock/server";

/** Thrown when the helper cannot find, start or reach the server; `code` says which case. */
export class MediamockError extends Error {
  readonly code: MediamockErrorCode;
  constructor(code: MediamockErrorCode, message: string) {
    super(message);
    this.name = "MediamockError";
    this.code = code;
  }
}

export type MediamockErrorCode =
  | "unsupported_platform"
  | "binary_missing"
  | "port_busy"
  | "exited_at_start"
  | "start_timeout"
  | "control_error";

/**
 * This machine's platform as npm names it (`linux-x64`, `darwin-arm64`,
 * `win32-x64`, ...); MEDIAMOCK_PLATFORM overrides it.
 */
export function currentPlatform(env: NodeJS.ProcessEnv = process.env): string {
  return env.MEDIAMOCK_PLATFORM || `${process.platform}-${process.arch}`;
}

/** The platforms a binary is published for. */
export function supportedPlatforms(): string[] {
  return PLATFORMS.map((p) => p.npm);
}

/** The name of the package that carries the binary for a platform. */
export function platformPackage(platform: string): string {
  return `${PACKAGE}-${platform}`;
}

/**
 * The path of the mockserver binary to run: MEDIAMOCK_BINARY when set,
 * else the binary of this platform's package. Throws a MediamockError that
 * says what is missing and how to fix it.
 */
export function resolveBinary(env: NodeJS.ProcessEnv = process.env): string {
  const override = env.MEDIAMOCK_BINARY;
  if (override) {
    if (!existsSync(override) || !statSync(override).isFile()) {
      throw new MediamockError("binary_missing",
        `MEDIAMOCK_BINARY is set to ${JSON.stringify(override)}, which is not a file. ` +
        `Point it at a mockserver binary, or unset it to use the one of ${platformPackage(currentPlatform(env))}.`);
    }
    return override;
  }
  const platform = currentPlatform(env);
  const target = PLATFORMS.find((p) => p.npm === platform);
  if (!target) {
    throw new MediamockError("unsupported_platform",
      `${PACKAGE} has no mockserver binary for platform ${platform}` +
      `${env.MEDIAMOCK_PLATFORM ? " (MEDIAMOCK_PLATFORM)" : ""}; it ships ${supportedPlatforms().join(", ")}. ` +
      `Build one from the source (go build ./cmd/mockserver, Go 1.26) and set MEDIAMOCK_BINARY to its path.`);
  }
  const pkg = platformPackage(platform);
  const exe = target.os === "win32" ? "mockserver.exe" : "mockserver";
  let dir: string;
  try {
    dir = dirname(require.resolve(`${pkg}/package.json`));
  } catch {
    throw new MediamockError("binary_missing",
      `The mockserver binary for ${platform} comes in the package ${pkg}, an optional dependency of ${PACKAGE}, ` +
      `and it is not installed. Install it (npm install --save-dev ${pkg}@${version()}), ` +
      `or reinstall without --omit=optional / --no-optional, ` +
      `or set MEDIAMOCK_BINARY to the path of a mockserver binary.`);
  }
  const bin = join(dir, "bin", exe);
  if (!existsSync(bin)) {
    throw new MediamockError("binary_missing",
      `${pkg} is installed at ${dir} but holds no bin/${exe}; reinstall it, or set MEDIAMOCK_BINARY to the path of a mockserver binary.`);
  }
  return bin;
}

/** The version of this package (also the binary's: one version for all). */
export function version(): string {
  return (require("../package.json") as { version: string }).version;
}
