// kvsweep audit's reading and analysis of outside results, on the seeds' own published blocks.
#include "figures/audit.h"

#include <gtest/gtest.h>

#include <cmath>
#include <fstream>
#include <limits>
#include <sstream>

namespace kvsweep::figures {
namespace {

std::string read(const std::string& path) {
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

const std::string kSeeds = KVSWEEP_SEED_FIXTURES;

TEST(Audit, SeedTwosTwelveBlocksGiveTheIssuesTableAndFlagThePrefixHashArm) {
  const std::string path = kSeeds + "/002_d7a4aa4a246033b9.txt";
  const auto results = read_outside_results(read(path), path);
  ASSERT_EQ(results.size(), 12u);
  // Little's law in flight, per level (cap, rate): Service, LeastLoad, PrefixHash.
  const double little[12] = {776, 767, 518, 1356, 1386, 443, 2215, 2102, 440, 3316, 2896, 463};
  const int caps[4] = {800, 1600, 3200, 8000};
  const double rates[4] = {800, 200, 200, 800};
  for (std::size_t i = 0; i < results.size(); ++i) {
    const AuditedRun a = audit_result(results[i]);
    SCOPED_TRACE(results[i].label + " at " + results[i].where);
    EXPECT_EQ(*results[i].max_concurrency, caps[i / 3]);
    EXPECT_EQ(*results[i].request_rate, rates[i / 3]);
    EXPECT_EQ(*results[i].num_prompts, 8000);
    EXPECT_NEAR(*a.little_in_flight, little[i], 1.0);
    const bool prefix_hash = results[i].label.find("Prefix Hash") != std::string::npos;
    EXPECT_EQ(prefix_hash, i % 3 == 2);
    EXPECT_EQ(a.short_of_concurrency, prefix_hash);
    EXPECT_EQ(a.verdict, prefix_hash ? "short of its concurrency" : "valid");
  }
  // The rate achieved against the rate asked for: 76.43 of 800 at the first level.
  EXPECT_NEAR(*audit_result(results[2]).rate_fraction, 76.43 / 800, 1e-9);
  EXPECT_NE(results[2].label.find("800 concurrent requests"), std::string::npos)
      << results[2].label;
}

TEST(Audit, SeedZerosBlocksTakeTheLoadFromTheCommandLineAboveThem) {
  const std::string path = kSeeds + "/000_6c6301bcc3e48923.txt";
  const auto results = read_outside_results(read(path), path);
  ASSERT_EQ(results.size(), 2u);
  for (const auto& r : results) {
    // The write-up's `--request-rate 200 --max-concurrency 400 --num-prompts 2000`.
    EXPECT_EQ(*r.request_rate, 200);
    EXPECT_EQ(*r.max_concurrency, 400);
    EXPECT_EQ(*r.num_prompts, 2000);
    const AuditedRun a = audit_result(r);
    // Both arms filled their cap: about 370 in flight of 400 at 23.4-23.8 req/s.
    EXPECT_EQ(a.verdict, "valid") << r.label;
    EXPECT_GT(*a.cap_fraction, 0.9);
    EXPECT_LT(*a.cap_fraction, 0.97);
  }
}

// An outside result has means only: every over-capacity rule (backlog, in flight,
// completions, the servers' queue) is listed as not evaluated, with why, never as valid.
TEST(Audit, OverCapacityIsNotEvaluatedAndSaysWhy) {
  const std::string path = kSeeds + "/000_6c6301bcc3e48923.txt";
  const auto results = read_outside_results(read(path), path);
  ASSERT_FALSE(results.empty());
  const AuditedRun a = audit_result(results[0]);
  bool said = false;
  for (const std::string& why : a.not_evaluated) {
    said |= why.rfind(
                "over capacity (backlog, in flight, completions, servers' waiting queue): "
                "the file holds no per-request times",
                0) == 0;
  }
  EXPECT_TRUE(said);
  EXPECT_FALSE(a.short_of_concurrency);
}

TEST(Audit, ABlockWithoutARateIsNotJudgedUntilOneIsGiven) {
  const std::string block =
      "============ Serving Benchmark Result ============\n"
      "Successful requests:                     1000\n"
      "Benchmark duration (s):                  100.00\n"
      "Total generated tokens:                  101000\n"
      "Request throughput (req/s):              10.00\n"
      "Mean TTFT (ms):                          100.00\n"
      "Mean TPOT (ms):                          9.00\n"
      "==================================================\n";
  auto results = read_outside_results(block, "paste.txt");
  ASSERT_EQ(results.size(), 1u);
  EXPECT_FALSE(results[0].request_rate);
  const AuditedRun unjudged = audit_result(results[0]);
  EXPECT_EQ(unjudged.verdict, "not judged");
  EXPECT_NEAR(*unjudged.little_in_flight, 10, 1e-9);  // Little's law needs no rate
  results[0].request_rate = 10;  // 10 req/s asked, 10 served, no cap: nothing waited
  EXPECT_EQ(audit_result(results[0]).verdict, "valid");
}

// A concurrency or prompt count no int holds (inf, 1e300, negative) is no value; a request
// rate of inf is vLLM's "no rate limit" and kept. Found by fuzz_outside_result: casting inf to
// int was undefined behaviour.
TEST(Audit, AFlagValueOutOfRangeIsNoValue) {
  const std::string result_block =
      "============ Serving Benchmark Result ============\n"
      "Successful requests:                     1000\n"
      "Benchmark duration (s):                  100.00\n"
      "Total generated tokens:                  101000\n"
      "Request throughput (req/s):              10.00\n"
      "Mean TTFT (ms):                          100.00\n"
      "Mean TPOT (ms):                          9.00\n"
      "==================================================\n";
  for (const char* flags : {"--request-rate inf --max-concurrency inf --num-prompts inf",
                            "--request-rate inf --max-concurrency 1e300 --num-prompts 1e300",
                            "--request-rate inf --max-concurrency -5 --num-prompts -1"}) {
    const auto results = read_outside_results(
        std::string("vllm bench serve ") + flags + "\n" + result_block, "paste.txt");
    ASSERT_EQ(results.size(), 1u) << flags;
    ASSERT_TRUE(results[0].request_rate) << flags;
    EXPECT_TRUE(std::isinf(*results[0].request_rate)) << flags;
    EXPECT_FALSE(results[0].max_concurrency) << flags;
    EXPECT_FALSE(results[0].num_prompts) << flags;
  }
}

// A count no integer holds, in a block or a result JSON, is an error naming the file, line and
// field, never a cast (undefined behaviour).
TEST(Audit, ACountOutOfRangeInABlockOrAResultJsonIsNamed) {
  const std::string block =
      "============ Serving Benchmark Result ============\n"
      "Successful requests:                     1000\n"
      "Maximum request concurrency:             inf\n"
      "Benchmark duration (s):                  100.00\n"
      "Request throughput (req/s):              10.00\n"
      "==================================================\n";
  try {
    read_outside_results(block, "paste.txt");
    FAIL() << "an infinite concurrency was read";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find(
                  "paste.txt:3: Maximum request concurrency: expected a count from 0 to "
                  "2147483647"),
              std::string::npos)
        << e.what();
  }
  try {
    read_outside_results(R"({"completed": 1e300, "duration": 10, "request_throughput": 1})",
                         "result.json");
    FAIL() << "1e300 requests were read";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("result.json: completed: expected a count from 0 to "),
              std::string::npos)
        << e.what();
  }
}

TEST(Audit, AResultJsonIsReadByVllmsKeys) {
  const std::string json = R"({"completed": 1000, "duration": 100.0, "request_throughput": 10.0,
    "total_output_tokens": 101000, "mean_ttft_ms": 100.0, "mean_tpot_ms": 9.0,
    "request_rate": "inf", "max_concurrency": 100, "num_prompts": 1000, "label": "x"})";
  const auto results = read_outside_results(json, "r.json");
  ASSERT_EQ(results.size(), 1u);
  EXPECT_TRUE(std::isinf(*results[0].request_rate));
  const AuditedRun a = audit_result(results[0]);
  // 10 req/s x (0.1 s + 9 ms x 100) = 10 in flight of 100: the cap stood mostly empty while
  // every request was due from the start.
  EXPECT_NEAR(*a.little_in_flight, 10, 1e-9);
  EXPECT_TRUE(a.short_of_concurrency);
}

TEST(Audit, BadInputNamesTheFileLineAndField) {
  try {
    read_outside_results(
        "x\n============ Serving Benchmark Result ============\n"
        "Successful requests:    many\n",
        "paste.txt");
    FAIL() << "no error";
  } catch (const std::invalid_argument& e) {
    EXPECT_STREQ(e.what(), "paste.txt:3: Successful requests: expected a number, got \"many\"");
  }
  EXPECT_THROW(read_outside_results("nothing here\n", "empty.txt"), std::invalid_argument);
  // Prose that names a flag is no value; a line of a megabyte is read without trouble.
  const auto prose =
      read_outside_results("set --request-rate to what you need\n" + std::string(1 << 20, '-') +
                               " --max-concurrency=64\n"
                               "============ Serving Benchmark Result ============\n"
                               "Successful requests: 10\nBenchmark duration (s): 1\n"
                               "Request throughput (req/s): 10\n=====\n",
                           "notes.md");
  ASSERT_EQ(prose.size(), 1u);
  EXPECT_FALSE(prose[0].request_rate);
  EXPECT_EQ(*prose[0].max_concurrency, 64);
  EXPECT_THROW(read_outside_results(R"({"duration": 1})", "r.json"), std::invalid_argument);
}

std::string error_of(const std::string& text, const std::string& path) {
  try {
    read_outside_results(text, path);
  } catch (const std::invalid_argument& e) {
    return e.what();
  }
  return "(no error)";
}

// A rate, a time or a throughput that is negative or not finite is refused naming the field:
// a negative rate read "valid", "inf" throughput too, a negative TTFT gave "-9987 in flight".
TEST(Audit, ANegativeOrInfiniteFigureIsRefusedNamingTheField) {
  const std::string json_head =
      R"({"completed": 1000, "duration": 100, "total_output_tokens": 1000,)";
  EXPECT_EQ(error_of(json_head + R"("request_throughput": 10, "request_rate": -5})", "r.json"),
            "r.json: request_rate: expected a rate > 0 or inf, got -5");
  EXPECT_EQ(error_of(json_head + R"("request_throughput": "inf"})", "r.json"),
            "r.json: request_throughput: expected a finite number >= 0, got inf");
  EXPECT_EQ(error_of(json_head + R"("request_throughput": 1e400})", "r.json")
                .rfind("r.json: starts like JSON but is not JSON: ", 0),
            0u);
  EXPECT_EQ(error_of(json_head + R"("request_throughput": 10, "mean_ttft_ms": -100000})", "r.json"),
            "r.json: mean_ttft_ms: expected a finite number >= 0, got -100000");
  EXPECT_EQ(error_of(R"({"completed": 1, "duration": -1, "request_throughput": 1})", "r.json"),
            "r.json: duration: expected a finite number >= 0, got -1");
  const std::string block =
      "============ Serving Benchmark Result ============\n"
      "Successful requests:                     1000\n"
      "Benchmark duration (s):                  100.00\n"
      "Request throughput (req/s):              10.00\n"
      "Mean TTFT (ms):                          -9999\n"
      "==================================================\n";
  EXPECT_EQ(error_of("# x\n" + block, "paste.txt"),
            "paste.txt:6: Mean TTFT (ms): expected a finite number >= 0, got -9999");
  const std::string rate_block =
      "============ Serving Benchmark Result ============\n"
      "Successful requests:                     1000\n"
      "Benchmark duration (s):                  100.00\n"
      "Request throughput (req/s):              10.00\n"
      "Mean TTFT (ms):                          100\n"
      "==================================================\n";
  EXPECT_EQ(error_of(rate_block.substr(0, rate_block.rfind("\n=") + 1) +
                         "Request rate configured (RPS): -3\n=====\n",
                     "paste.txt"),
            "paste.txt:6: Request rate configured (RPS): expected a rate > 0 or inf, got -3");
  // A command line's rate of 0 or below is no rate (as a count out of range is no count).
  const auto results =
      read_outside_results("vllm bench serve --request-rate 0\n" + rate_block, "p.txt");
  ASSERT_EQ(results.size(), 1u);
  EXPECT_FALSE(results[0].request_rate);
}

// A label of null is vLLM's own when --label was not given: the model names the run. Any
// other non-text label, or a needed figure given as an array, is named.
TEST(Audit, ANullLabelIsAbsentAndAnotherKindIsNamed) {
  const std::string figures = R"("completed": 10, "duration": 1, "request_throughput": 10)";
  const auto results =
      read_outside_results("{" + figures + R"(, "label": null, "model_id": "llama"})", "r.json");
  ASSERT_EQ(results.size(), 1u);
  EXPECT_EQ(results[0].label, "llama");
  EXPECT_EQ(read_outside_results("{" + figures + R"(, "label": null})", "r.json")[0].label,
            "r.json");
  EXPECT_EQ(error_of("{" + figures + R"(, "label": 7})", "r.json"),
            "r.json: label: expected a string or null, got number");
  EXPECT_EQ(error_of("{" + figures + R"(, "label": {"a": 1}})", "r.json"),
            "r.json: label: expected a string or null, got an object");
  EXPECT_EQ(error_of(R"({"completed": [10], "duration": 1, "request_throughput": 10})", "r.json"),
            "r.json: completed: expected a number, got an array");
}

// Text that is not UTF-8 is refused with its line (a heading became a label, and --json threw
// the JSON library's own exception on it); control characters never reach a label or an
// error message.
TEST(Audit, NonUtf8TextIsRefusedAndControlCharactersAreStripped) {
  const std::string block =
      "============ Serving Benchmark Result ============\n"
      "Successful requests:                     10\n"
      "Benchmark duration (s):                  1\n"
      "Request throughput (req/s):              10\n"
      "==================================================\n";
  EXPECT_EQ(error_of("# notes\n## caf\xe9 run\n" + block, "p.md"),
            "p.md:2: not UTF-8 text (byte 0xE9 at column 7); save the file as UTF-8");
  const auto results = read_outside_results(
      "## \x1b[31mred\x1b[0m \xc2\x9b"
      "2J arm\t1\n" +
          block,
      "p.md");
  ASSERT_EQ(results.size(), 1u);
  EXPECT_EQ(results[0].label, "[31mred[0m 2J arm 1");
  EXPECT_EQ(error_of("x\n============ Serving Benchmark Result ============\n"
                     "Successful requests:    \x1b]0;owned\x07\n",
                     "p.md"),
            "p.md:3: Successful requests: expected a number, got \"]0;owned\"");
  // A label is one line of at most 200 bytes, however long its heading.
  const auto long_heading =
      read_outside_results("## " + std::string(100000, 'h') + "\n" + block, "p.md");
  EXPECT_EQ(long_heading[0].label.size(), 200u);
}

// Memory stays near the input's size: nesting past 32 levels is refused at once, nested
// values and keys the audit does not read are dropped as they are parsed.
TEST(Audit, DeepOrHugeJsonIsRefusedOrDroppedAsItIsRead) {
  const std::string deep = "{\"a\": " + std::string(100000, '[') + std::string(100000, ']') + "}";
  EXPECT_EQ(error_of(deep, "deep.json"), "deep.json: nested deeper than 32 levels");
  std::string wide = R"({"completed": 10, "duration": 1, "request_throughput": 10, "itls": [)";
  for (int i = 0; i < 100000; ++i) wide += "[1.5, 2.5],";
  wide += R"([1]], "other": {"x": [1, 2]})";
  for (int i = 0; i < 1000; ++i) wide += ", \"k" + std::to_string(i) + "\": 1";
  wide += "}";
  const auto results = read_outside_results(wide, "wide.json");
  ASSERT_EQ(results.size(), 1u);
  EXPECT_EQ(results[0].completed, 10);
  EXPECT_EQ(error_of("{\"completed\": 1,", "cut.json")
                .rfind("cut.json: starts like JSON but is not JSON: ", 0),
            0u);
}

TEST(Audit, TheFluidModelKeepsTheCapFullWhileABacklogLasts) {
  // 1000 requests all due at once, 10 in flight, 10 done a second: the cap is full for 99 s of
  // the 100, then drains.
  EXPECT_NEAR(fluid_in_flight(1000, std::numeric_limits<double>::infinity(), 10, 10), 9.95, 0.05);
  // Arrivals at 1/s served at 10/s: about 0.05 in flight on average.
  EXPECT_LT(fluid_in_flight(100, 1, 0, 10), 0.2);
}

}  // namespace
}  // namespace kvsweep::figures
