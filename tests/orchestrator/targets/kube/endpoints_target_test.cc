// The endpoints target: one factor's level picks which simulated fleet the load goes to.
#include "orchestrator/targets/kube/kube_targets.h"
#include "tests/orchestrator/targets/kube/kube_test_env.h"

namespace kvsweep::orchestrator::kube::test {
namespace {

class EndpointsTargetTest : public KubeTargetTest {
 protected:
  EndpointsTargetTest()
      : direct_(start_fleet(1, "sim-model")), gateway_(start_fleet(2, "sim-model")) {}

  ScenarioSpec endpoints_spec() const {
    ScenarioSpec spec = scenario("endpoints");
    spec.target.kubeconfig.clear();
    add_factor(spec, "prefix_caching", {"off", "on"});
    spec.target.levels["prefix_caching"]["off"].base_url = direct_->router_url();
    spec.target.levels["prefix_caching"]["off"].metrics_urls = {direct_->replica_urls()[0] +
                                                                "/metrics"};
    spec.target.levels["prefix_caching"]["on"].base_url = gateway_->router_url();
    spec.target.metrics.urls = {"http://fallback/metrics"};
    return spec;
  }

  std::unique_ptr<sim::Fleet> direct_;
  std::unique_ptr<sim::Fleet> gateway_;
};

std::string message_of(const ScenarioSpec& spec) {
  return target_error_of([&] { make_endpoints_target(spec); });
}

TEST_F(EndpointsTargetTest, TheFactorLevelSwitchesTheUrl) {
  auto target = make_endpoints_target(endpoints_spec());
  target->start();
  const Treatment on{{{"prefix_caching", "on"}}, ""};
  EXPECT_EQ(target->planned_commands(nullptr, on),
            (std::vector<std::vector<std::string>>{{"use", gateway_->router_url()}}));
  CommandLogs ran = target->apply(on);
  EXPECT_EQ(target->endpoints().base_url, gateway_->router_url());
  EXPECT_EQ(target->endpoints().metrics_urls, std::vector<std::string>{"http://fallback/metrics"});
  ran = target->wait_ready();
  EXPECT_TRUE(ran.empty());
  EXPECT_NO_THROW(target->make_cold());

  EXPECT_TRUE(target->apply({{{"prefix_caching", "off"}}}).empty());  // no command to run
  EXPECT_EQ(target->endpoints().base_url, direct_->router_url());
  EXPECT_EQ(target->endpoints().metrics_urls,
            std::vector<std::string>{direct_->replica_urls()[0] + "/metrics"});
  EXPECT_TRUE(target->wait_ready().empty());
  EXPECT_TRUE(target->cell_finished().empty());
  EXPECT_EQ(target->describe(), "endpoints by prefix_caching (off=" + direct_->router_url() +
                                    ", on=" + gateway_->router_url() + ")");
  EXPECT_EQ(server_.calls().size(), 0u);  // no kubectl, no cluster
}

TEST_F(EndpointsTargetTest, TheModelsGateNamesItselfWhenTheModelIsNotServed) {
  ScenarioSpec spec = endpoints_spec();
  spec.model = "llama-3-70b";
  spec.target.readiness.models_s = 0.3;
  auto target = make_endpoints_target(spec);
  const std::string error = target_error_of([&] { target->wait_ready(); });
  EXPECT_CONTAINS(error, "readiness gate models: not open after");
  EXPECT_CONTAINS(error, "does not list \"llama-3-70b\"");
}

TEST_F(EndpointsTargetTest, WithoutAFactorTheBaseUrlIsTheEndpoint) {
  ScenarioSpec spec = scenario("endpoints");
  spec.target.base_url = gateway_->router_url();
  auto target = make_endpoints_target(spec);
  EXPECT_EQ(target->endpoints().base_url, gateway_->router_url());
  EXPECT_EQ(target->planned_commands(nullptr, {}),
            (std::vector<std::vector<std::string>>{{"use", gateway_->router_url()}}));
  target->apply({});
  target->wait_ready();
  EXPECT_EQ(target->describe(), "endpoints " + gateway_->router_url());

  spec.target.base_url.clear();
  EXPECT_CONTAINS(message_of(spec), "target.base_url: required for kind endpoints");
}

TEST_F(EndpointsTargetTest, TheConstructorRejectsWhatItCannotSwitch) {
  ScenarioSpec spec = endpoints_spec();
  add_factor(spec, "strategy", {"kv"});
  EXPECT_CONTAINS(message_of(spec),
                  "factors prefix_caching, strategy: kind endpoints switches "
                  "the URL by one factor only");
  spec = endpoints_spec();
  spec.target.levels["prefix_caching"]["on"].base_url.clear();
  EXPECT_EQ(message_of(spec),
            "factor prefix_caching: level \"on\" needs "
            "target.levels.prefix_caching.on.base_url (levels with a "
            "base_url: off)");
  spec = endpoints_spec();
  spec.target.cold_method = "restart";
  EXPECT_CONTAINS(message_of(spec),
                  "target.cold_method: kind endpoints cannot restart plain "
                  "endpoints");
  spec.load.cache = CachePolicy::kWarm;  // no cell needs a cold cache: restart is never asked for
  auto target = make_endpoints_target(spec);
  EXPECT_THROW(target->make_cold(), TargetError);
  EXPECT_EQ(target->planned_commands(nullptr, {{{"prefix_caching", "maybe"}}}).size(), 1u);
  EXPECT_THROW(target->apply({{{"prefix_caching", "maybe"}}}), TargetError);
}

}  // namespace
}  // namespace kvsweep::orchestrator::kube::test
