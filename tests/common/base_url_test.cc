// Tests for common/base_url.cc: one normal form, with or without /v1 and trailing slashes.
#include "common/base_url.h"

#include <gtest/gtest.h>

namespace kvsweep {
namespace {

TEST(BaseUrl, V1AndTrailingSlashesAreDropped) {
  for (const char* url : {"http://host:8000", "http://host:8000/", "http://host:8000/v1",
                          "http://host:8000/v1/", "http://host:8000//v1//"}) {
    EXPECT_EQ(normalize_base_url(url), "http://host:8000") << url;
  }
}

TEST(BaseUrl, APathBeforeV1IsKept) {
  EXPECT_EQ(normalize_base_url("http://kubeai/openai/v1"), "http://kubeai/openai");
  EXPECT_EQ(normalize_base_url("https://gw.example/llm/"), "https://gw.example/llm");
}

TEST(BaseUrl, OnlyAWholeV1SegmentAtTheEndIsAVersion) {
  EXPECT_EQ(normalize_base_url("http://v1"), "http://v1");  // a host named v1
  EXPECT_EQ(normalize_base_url("http://host/apiv1"), "http://host/apiv1");
  EXPECT_EQ(normalize_base_url("http://host/v1/models"), "http://host/v1/models");
  EXPECT_EQ(normalize_base_url(""), "");
}

}  // namespace
}  // namespace kvsweep
