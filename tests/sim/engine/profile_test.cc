// Tests sim/engine/profile.cc: YAML profiles, the shipped presets, user directories.
#include "sim/engine/profile.h"

#include <gtest/gtest.h>
#include <stdlib.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

#include "sim/engine/scheduler.h"

namespace kvsweep::sim {
namespace {

TEST(Profile, ListsEveryProfile) {
  EXPECT_EQ(profile_names(),
            (std::vector<std::string>{"demo", "h100-llama3.1-8b", "h100-llama3.3-70b-fp8-tp2",
                                      "h100-llama3.3-70b-tp4", "l4-llama3.1-8b-fp8"}));
  EXPECT_FALSE(find_profile("h100").has_value());
}

// The demo profile is what the quickstart runs on: steps must stay short enough that a sweep
// takes minutes, and prefill must cost more per token than decode, as on a real GPU, so that
// cache hits (skipped prefill) are what routing can win.
TEST(Profile, DemoIsFastAndPrefillBound) {
  auto p = find_profile("demo");
  ASSERT_TRUE(p.has_value());
  const double full_prefill_step_us =
      p->base_us + p->per_prefill_token_us * p->max_num_batched_tokens;
  EXPECT_LT(full_prefill_step_us, 50'000);
  EXPECT_GE(p->base_us, 500);  // steps long enough that the event loop's overhead is noise
  EXPECT_LT(p->per_decode_token_us * p->max_num_seqs, full_prefill_step_us);
  EXPECT_EQ(p->block_size, 16);
  EXPECT_FALSE(p->source.empty());
}

TEST(Profile, H100KvCapacityFollowsTheArithmetic) {
  auto small = find_profile("h100-llama3.1-8b");
  ASSERT_TRUE(small.has_value());
  EXPECT_DOUBLE_EQ(small->base_us, 5752.7);
  // (80 * 0.9 - 16) GiB / 128 KiB per token / 16 tokens per block
  EXPECT_EQ(small->num_gpu_blocks, (72 - 16) * 1024 * 1024 / 128 / 16);
  auto big = find_profile("h100-llama3.3-70b-tp4");
  ASSERT_TRUE(big.has_value());
  EXPECT_DOUBLE_EQ(big->per_prefill_token_us, 76.42);
  EXPECT_EQ(big->num_gpu_blocks, (288 - 140) * 1024 * 1024 / 320 / 16);
}

// Every shipped file parses (find_profile would return nullopt otherwise) and says its source.
TEST(Profile, EveryShippedPresetLoads) {
  for (const std::string& name : profile_names()) {
    std::string error;
    auto p = find_profile(name, {}, &error);
    ASSERT_TRUE(p.has_value()) << name << ": " << error;
    EXPECT_FALSE(p->source.empty()) << name;
    EXPECT_GT(p->base_us, 0) << name;
    EXPECT_TRUE(p->enable_prefix_caching) << name;  // vLLM's default
  }
}

// The L4 preset is a roofline of cited inputs (docs/profiles.md, "How the L4 preset was
// derived"), none of them a seed's outcome: the NVIDIA L4 datasheet, Llama 3.1 8B's shapes, and
// two published efficiencies of real engines. Each constant must follow from them; re-fitting
// the profile to a benchmark's results breaks this test, as it should (change the inputs and
// their citations instead).
TEST(Profile, L4PresetFollowsTheDatasheetAndPublishedEfficiencies) {
  auto p = find_profile("l4-llama3.1-8b-fp8");
  ASSERT_TRUE(p.has_value());

  // NVIDIA L4 datasheet: 300 GB/s GDDR6; 485 FP8 TFLOPS with sparsity, so 242.5 dense. An L4
  // reports 23,034 MiB to nvidia-smi.
  constexpr double kBytesPerSecond = 300e9;
  constexpr double kDenseFp8Flops = 242.5e12;
  constexpr double kDeviceMiB = 23034;
  // Published efficiencies: vLLM decodes Llama-3.1-8B at one request at 77% of the memory
  // roofline; BLIS's roofline table gives Ada (L40S) a prefill MFU of 0.32.
  constexpr double kBandwidthEfficiency = 0.77;
  constexpr double kPrefillMfu = 0.32;
  // Llama-3.1-8B (config.json): 32 layers, hidden 4096, 32 query / 8 KV heads of 128,
  // MLP 14336, vocabulary 128256. FP8 checkpoint: linear layers 1 byte a weight, embedding and
  // lm_head BF16; fp8 KV cache.
  constexpr double kLayers = 32, kHidden = 4096, kKvWidth = 8 * 128, kMlp = 14336;
  constexpr double kVocab = 128256;
  constexpr double kLinearWeights =
      kLayers * (2 * kHidden * kHidden + 2 * kHidden * kKvWidth + 3 * kHidden * kMlp);
  constexpr double kVocabMatrix = kVocab * kHidden;
  constexpr double kKvBytesPerToken = kLayers * kKvWidth * 2 /* K and V */ * 1 /* fp8 */;
  constexpr double kReferenceContext = 1024;  // tokens a decoding sequence attends to

  const double effective_bytes_per_us = kBytesPerSecond * kBandwidthEfficiency / 1e6;
  // Every step streams the FP8 linear layers and the BF16 lm_head once.
  const double streamed_bytes = kLinearWeights + 2 * kVocabMatrix;
  EXPECT_NEAR(streamed_bytes, 8.030e9, 1e6);
  EXPECT_NEAR(p->base_us, streamed_bytes / effective_bytes_per_us, 1);
  // Each decoding sequence reads its KV cache; its GEMM work hides under the weight reads.
  EXPECT_NEAR(p->per_decode_token_us, kReferenceContext * kKvBytesPerToken / effective_bytes_per_us,
              0.1);
  // Each prefill token: 2 FLOPs per linear weight, plus attention over half the context.
  const double prefill_flops = 2 * kLinearWeights + 4 * kLayers * kHidden * kReferenceContext / 2;
  EXPECT_NEAR(p->per_prefill_token_us, prefill_flops / (kDenseFp8Flops * kPrefillMfu / 1e6), 0.1);
  // KV: vLLM's 0.9 of the device, less the resident weights (embedding included) and a 1 GiB
  // reserve for activations, CUDA graphs and the CUDA context; a 16-token block is 1 MiB.
  const double weights_mib = (kLinearWeights + 2 * 2 * kVocabMatrix) / (1 << 20);
  EXPECT_DOUBLE_EQ(weights_mib, 8660);
  EXPECT_DOUBLE_EQ(p->block_size * kKvBytesPerToken, 1 << 20);
  EXPECT_EQ(p->num_gpu_blocks, static_cast<int>(0.9 * kDeviceMiB - weights_mib - 1024));

  // The published figure back: one decoding request runs at 77% of the bandwidth ceiling
  // (weights only), within 2 points (the KV read at the reference context is the difference).
  const double ceiling_tok_per_s = kBytesPerSecond / streamed_bytes;
  const double one_request_tok_per_s = 1e6 / step_duration_us(*p, 0, 1);
  EXPECT_NEAR(one_request_tok_per_s / ceiling_tok_per_s, kBandwidthEfficiency, 0.02);
  // And no step beats the hardware: a full batch of decodes stays under the bandwidth roofline,
  // a full chunk of prefill under the dense FP8 peak.
  const int batch = p->max_num_seqs;
  const double roofline_batch_us =
      (streamed_bytes + batch * kReferenceContext * kKvBytesPerToken) / kBytesPerSecond * 1e6;
  EXPECT_GT(step_duration_us(*p, 0, batch), roofline_batch_us);
  const int chunk = p->max_num_batched_tokens;
  EXPECT_GT(step_duration_us(*p, chunk, 0), chunk * prefill_flops / kDenseFp8Flops * 1e6);
}

TEST(Profile, ParseErrorsAreLocatedAndSuggestTheKey) {
  std::string error;
  auto p = parse_profile(
      "name: x\nbase_us: fast\nper_prefill_token_us: 1\n"
      "per_decode_token_us: 2\nmax_num_seq: 4\n",
      "mine.yaml", &error);
  EXPECT_FALSE(p.has_value());
  // Every error of the file, each with its line and a caret, as the scenario loader's.
  EXPECT_EQ(error,
            "mine.yaml:2:10: base_us: expected a number >= 0, got \"fast\"\n"
            "base_us: fast\n"
            "         ^\n"
            "mine.yaml:5:1: max_num_seq: unknown key; did you mean 'max_num_seqs'?\n"
            "max_num_seq: 4\n"
            "^");
}

TEST(Profile, NanAndInfinityAreNotNumbers) {
  const std::string rest = "per_prefill_token_us: 1\nper_decode_token_us: 1\n";
  for (const std::string value : {".nan", ".inf", "-.inf", ".NaN"}) {
    std::string error;
    EXPECT_FALSE(parse_profile("name: x\nbase_us: " + value + "\n" + rest, "x.yaml", &error))
        << value;
    EXPECT_EQ(error, "x.yaml:2:10: base_us: expected a number >= 0, got \"" + value +
                         "\"\nbase_us: " + value + "\n         ^");
  }
}

TEST(Profile, MissingKeysAKeyWrittenTwiceAndANonMappingAreLocated) {
  std::string error;
  EXPECT_FALSE(
      parse_profile("name: x\nbase_us: 1\nbase_us: 2\nper_decode_token_us: 1\n", "x.yaml", &error));
  EXPECT_EQ(error,
            "x.yaml:3:1: base_us: key written twice in one mapping (first at line 2, column 1); "
            "only one of them would be used: remove the other\n"
            "base_us: 2\n"
            "^\n"
            "x.yaml:1:1: per_prefill_token_us: required key is missing\n"
            "name: x\n"
            "^");
  EXPECT_FALSE(parse_profile("- name: x\n", "x.yaml", &error));
  EXPECT_EQ(error,
            "x.yaml:1:1: a profile is a mapping of keys to values, got a list\n- name: x\n^");
  EXPECT_FALSE(parse_profile("name: [x\n", "x.yaml", &error));
  EXPECT_EQ(error.rfind("x.yaml:2:1: invalid YAML: ", 0), 0u) << error;
}

TEST(Profile, PrefixCachingIsOnUnlessTurnedOff) {
  const std::string base = "name: x\nbase_us: 1\nper_prefill_token_us: 1\nper_decode_token_us: 1\n";
  auto on = parse_profile(base, "x.yaml", nullptr);
  ASSERT_TRUE(on.has_value());
  EXPECT_TRUE(on->enable_prefix_caching);
  auto off = parse_profile(base + "enable_prefix_caching: false\n", "x.yaml", nullptr);
  ASSERT_TRUE(off.has_value());
  EXPECT_FALSE(off->enable_prefix_caching);
  std::string error;
  EXPECT_FALSE(parse_profile(base + "enable_prefix_caching: maybe\n", "x.yaml", &error));
  EXPECT_EQ(error,
            "x.yaml:5:24: enable_prefix_caching: expected true or false, got \"maybe\"\n"
            "enable_prefix_caching: maybe\n"
            "                       ^");
  EXPECT_FALSE(parse_profile(base + "enable_prefix_caching: [1]\n", "x.yaml", &error));
  EXPECT_EQ(error,
            "x.yaml:5:24: enable_prefix_caching: expected true or false, got a list\n"
            "enable_prefix_caching: [1]\n"
            "                       ^");
}

class ProfileDir : public ::testing::Test {
 protected:
  void SetUp() override {
    char tmpl[] = "/tmp/kvsweep_profiles_XXXXXX";
    ASSERT_NE(mkdtemp(tmpl), nullptr);
    dir_ = tmpl;
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }
  void write(const std::string& file, const std::string& text) {
    std::ofstream(dir_ + "/" + file) << text;
  }
  std::string dir_;
};

TEST_F(ProfileDir, UserDirectoryAddsAndShadowsProfiles) {
  write("mine.yaml",
        "name: mine\nbase_us: 1\nper_prefill_token_us: 2\nper_decode_token_us: 3\n"
        "per_kv_usage_us: 4\nnum_gpu_blocks: 100\n");
  write("demo.yaml", "name: demo\nbase_us: 9\nper_prefill_token_us: 2\nper_decode_token_us: 3\n");
  auto mine = find_profile("mine", {dir_}, nullptr);
  ASSERT_TRUE(mine.has_value());
  EXPECT_DOUBLE_EQ(mine->per_kv_usage_us, 4);
  EXPECT_EQ(mine->num_gpu_blocks, 100);
  EXPECT_EQ(mine->max_num_seqs, 256);  // unset keys keep their defaults
  EXPECT_DOUBLE_EQ(find_profile("demo", {dir_}, nullptr)->base_us, 9);
  EXPECT_DOUBLE_EQ(find_profile("demo")->base_us, 1000);  // the shipped one, without the dir
  const auto names = profile_names({dir_});
  EXPECT_EQ(names.back(), "mine");
  EXPECT_EQ(std::count(names.begin(), names.end(), "demo"), 1);
}

TEST_F(ProfileDir, EnvironmentPathIsSearchedAndBadFilesReportWhy) {
  write("broken.yaml",
        "name: broken\nbase_us: -1\nper_prefill_token_us: 2\nper_decode_token_us: 3\n");
  ASSERT_EQ(setenv("KVSWEEP_PROFILE_PATH", ("/nonexistent:" + dir_).c_str(), 1), 0);
  std::string error;
  EXPECT_FALSE(find_profile("broken", {}, &error).has_value());
  unsetenv("KVSWEEP_PROFILE_PATH");
  EXPECT_EQ(error, dir_ +
                       "/broken.yaml:2:10: base_us: expected a number >= 0, got \"-1\"\n"
                       "base_us: -1\n"
                       "         ^");
}

// Found by fuzz_profile_loader: a mapping without `name` threw YAML::InvalidNode out of the
// loader (the check for the name read a missing key) instead of reporting the missing key.
TEST(Profile, AFileWithoutANameSaysSoInsteadOfThrowing) {
  std::string error;
  const auto p = parse_profile("base_us: 1\nper_prefill_token_us: 1\nper_decode_token_us: 1\n",
                               "profiles/laptop.yaml", &error);
  EXPECT_FALSE(p.has_value());
  EXPECT_NE(error.find("profiles/laptop.yaml:1:1: name: required key is missing"),
            std::string::npos)
      << error;
}

// What `kvsweep calibrate` writes reads back equal, field by field, numbers to the last bit,
// and a name or source with quotes, backslashes and a newline survives.
TEST(Profile, WrittenYamlReadsBackEqual) {
  TimingProfile p;
  p.name = "l4 \"calibrated\"\\x";
  p.source = "fit to experiment 3\nof 2026-11-27";
  p.base_us = 1234.5678901234567;
  p.per_prefill_token_us = 0.1 + 0.2;  // not representable in a short decimal
  p.per_decode_token_us = 31.25;
  p.per_kv_usage_us = 7e-5;
  p.per_context_token_us = 0.1113;
  p.max_num_seqs = 17;
  p.max_num_batched_tokens = 4097;
  p.num_gpu_blocks = 12345;
  p.block_size = 32;
  p.max_model_len = 9000;
  p.default_max_tokens = 99;
  p.enable_prefix_caching = false;
  p.engine = EngineKind::kSlot;
  const std::string text = profile_to_yaml(p, "made by a test");
  EXPECT_EQ(text.rfind("# made by a test\n", 0), 0u) << text;
  std::string error;
  const auto back = parse_profile(text, "written.yaml", &error);
  ASSERT_TRUE(back) << error << "\n" << text;
  EXPECT_EQ(back->name, p.name);
  EXPECT_EQ(back->source, "fit to experiment 3\nof 2026-11-27");
  EXPECT_EQ(back->base_us, p.base_us);
  EXPECT_EQ(back->per_prefill_token_us, p.per_prefill_token_us);
  EXPECT_EQ(back->per_decode_token_us, p.per_decode_token_us);
  EXPECT_EQ(back->per_kv_usage_us, p.per_kv_usage_us);
  EXPECT_EQ(back->per_context_token_us, p.per_context_token_us);
  EXPECT_EQ(back->max_num_seqs, 17);
  EXPECT_EQ(back->max_num_batched_tokens, 4097);
  EXPECT_EQ(back->num_gpu_blocks, 12345);
  EXPECT_EQ(back->block_size, 32);
  EXPECT_EQ(back->max_model_len, 9000);
  EXPECT_EQ(back->default_max_tokens, 99);
  EXPECT_FALSE(back->enable_prefix_caching);
  EXPECT_EQ(back->engine, EngineKind::kSlot);
  EXPECT_NE(text.find("\nengine: slot\n"), std::string::npos) << text;
  // And the default written as such, so a fitted profile always says which engine it models.
  p.engine = EngineKind::kPaged;
  EXPECT_NE(profile_to_yaml(p).find("\nengine: paged\n"), std::string::npos);
}

TEST(Profile, EngineIsPagedUnlessSaidAndAnUnknownKindIsLocated) {
  const std::string base = "name: x\nbase_us: 1\nper_prefill_token_us: 1\nper_decode_token_us: 1\n";
  auto paged = parse_profile(base, "x.yaml", nullptr);
  ASSERT_TRUE(paged.has_value());
  EXPECT_EQ(paged->engine, EngineKind::kPaged);
  auto slot = parse_profile(base + "engine: slot\n", "x.yaml", nullptr);
  ASSERT_TRUE(slot.has_value());
  EXPECT_EQ(slot->engine, EngineKind::kSlot);
  std::string error;
  EXPECT_FALSE(parse_profile(base + "engine: slots\n", "llama.yaml", &error));
  EXPECT_EQ(error,
            "llama.yaml:5:9: engine: expected one of paged, slot, got \"slots\"; did you mean "
            "'slot'?\n"
            "engine: slots\n"
            "        ^");
  EXPECT_FALSE(parse_profile(base + "engine: vllm\n", "llama.yaml", &error));
  EXPECT_EQ(error,
            "llama.yaml:5:9: engine: expected one of paged, slot, got \"vllm\"\n"
            "engine: vllm\n"
            "        ^");
}

// per_context_token_us is optional (0 when absent: no context term, as every shipped profile),
// read as given, and a bad value is a located error like any coefficient's.
TEST(Profile, ContextTermIsOptionalAndABadValueIsLocated) {
  const std::string head =
      "name: cpu\nbase_us: 100\nper_prefill_token_us: 120\nper_decode_token_us: 500\n";
  std::string error;
  const auto without = parse_profile(head, "cpu.yaml", &error);
  ASSERT_TRUE(without) << error;
  EXPECT_EQ(without->per_context_token_us, 0);
  const auto with = parse_profile(head + "per_context_token_us: 0.11\n", "cpu.yaml", &error);
  ASSERT_TRUE(with) << error;
  EXPECT_DOUBLE_EQ(with->per_context_token_us, 0.11);
  EXPECT_FALSE(parse_profile(head + "per_context_token_us: -0.5\n", "cpu.yaml", &error));
  EXPECT_NE(error.find("cpu.yaml:5:23: per_context_token_us: expected a number >= 0, got "
                       "\"-0.5\""),
            std::string::npos)
      << error;
}

}  // namespace
}  // namespace kvsweep::sim
