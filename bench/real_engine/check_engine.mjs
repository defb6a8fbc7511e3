// Loads node-llama-cpp's prebuilt CPU binary and says which; exits 1 when it cannot (setup.sh).
// A file, not `node -e`: node-llama-cpp tests its binary in a forked copy of the running script,
// which an inline script does not give it.
import {getLlama} from "node-llama-cpp";

try {
  // build: "never": a binary that does not load is an error here, never a source build.
  const llama = await getLlama({gpu: false, build: "never", progressLogs: false, logLevel: "error"});
  console.log(`node-llama-cpp ready: ${llama.buildType} CPU binary`);
} catch (e) {
  console.error(`check_engine.mjs: error: ${e.message ?? e}`);
  process.exit(1);
}
