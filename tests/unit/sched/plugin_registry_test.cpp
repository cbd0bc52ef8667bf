// The plugin row is the registry (runtime/sched/profile.h): what C++ knows
// of a plugin — its files, its remedies, its args reader, its PostFilter,
// the default spread, the release it is told — comes from its row. These
// tests hold each field to what reads it.

#include <doctest/doctest.h>

#include <algorithm>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "compiler/driver/compilation.h"
#include "runtime/sched/profile.h"
#include "stdlib/embedded.h"

using namespace policy;

namespace {

std::set<std::string> Names(const std::vector<std::string_view>& names) { return {names.begin(), names.end()}; }

std::optional<std::vector<rt::Profile>> Read(const std::string& yaml, DiagnosticSink& diags, int minor = 34) {
  auto source = std::make_shared<const Source>("profile.yaml", yaml);
  return rt::ReadProfiles(*source, diags, minor);
}

const rt::PluginSetting* Setting(const rt::Profile& profile, std::string_view name) {
  for (const rt::PluginSetting& p : profile.plugins) {
    if (p.name == name) return &p;
  }
  return nullptr;
}

}  // namespace

TEST_CASE("every row's stdlib files are embedded and its names are unique") {
  std::set<std::string_view> embedded, names;
  for (const stdlib::EmbeddedPolicy& e : stdlib::Sources()) embedded.insert(e.path);
  for (const rt::InTreePlugin& p : rt::InTreePlugins()) {
    CAPTURE(p.name);
    CHECK(names.insert(p.name).second);
    if (!p.filter_file.empty()) CHECK(embedded.contains(p.filter_file));
    if (!p.score_file.empty()) CHECK(embedded.contains(p.score_file));
    // A remedy that lowers requests needs the words that name the resource.
    CHECK((p.remedy == rt::PodRemedy::kLowerRequests) == !p.shortage_prefix.empty());
  }
  CHECK(rt::FindInTreePlugin("NodeResourcesFit") != nullptr);
  CHECK(rt::FindInTreePlugin("nodeResourcesFit") == nullptr);
}

TEST_CASE("an edit relieves the plugins whose rows say so - its own remedy and the pod parts they also read") {
  using R = rt::PodRemedy;
  CHECK(Names(rt::PluginsRelievedBy(R::kTolerate)) ==
        std::set<std::string>{"NodeUnschedulable", "TaintToleration", "PodTopologySpread"});
  CHECK(Names(rt::PluginsRelievedBy(R::kNodeAffinity)) == std::set<std::string>{"NodeAffinity", "PodTopologySpread"});
  CHECK(Names(rt::PluginsRelievedBy(R::kSpread)) == std::set<std::string>{"PodTopologySpread"});
  CHECK(Names(rt::PluginsRelievedBy(R::kLowerRequests)) == std::set<std::string>{"NodeResourcesFit"});
  CHECK(Names(rt::PluginsRelievedBy(R::kClaims)) == std::set<std::string>{"DynamicResources"});
  CHECK(rt::PluginsRelievedBy(R::kNone).empty());  // no edit is of no kind
  CHECK(rt::RemedySet({R::kNone}) == 0);
}

TEST_CASE("PostFilters come from the rows - DynamicResources' from 1.34 and only while its filters run") {
  const rt::InTreePlugin* claims = rt::PostFilterOf(rt::DefaultProfile(34), rt::PostFilter::kDeallocateClaims);
  REQUIRE(claims != nullptr);
  CHECK(claims->name == "DynamicResources");
  CHECK(rt::PostFilterOf(rt::DefaultProfile(31), rt::PostFilter::kDeallocateClaims) == nullptr);

  DiagnosticSink diags;
  auto off = Read(R"(apiVersion: kubescheduler.config.k8s.io/v1
kind: KubeSchedulerConfiguration
profiles:
- plugins:
    filter: {disabled: [{name: DynamicResources}]}
    postFilter: {disabled: [{name: DefaultPreemption}]}
)",
                  diags);
  REQUIRE(off);
  CHECK(rt::PostFilterOf(off->front(), rt::PostFilter::kDeallocateClaims) == nullptr);
  CHECK_FALSE(off->front().preemption);
  CHECK(rt::DefaultProfile().preemption);
  // --plugins: preemption stays only when the list names the plugin whose PostFilter it is.
  std::optional<rt::Profile> only = rt::RestrictProfile(rt::DefaultProfile(), {"NodeAffinity"}, nullptr);
  REQUIRE(only);
  CHECK_FALSE(only->preemption);
  only = rt::RestrictProfile(rt::DefaultProfile(), {"NodeAffinity", "DefaultPreemption"}, nullptr);
  REQUIRE(only);
  CHECK(only->preemption);
}

TEST_CASE("args go to the row's reader - a row without one refuses them") {
  DiagnosticSink diags;
  auto most = Read(R"(apiVersion: kubescheduler.config.k8s.io/v1
kind: KubeSchedulerConfiguration
profiles:
- pluginConfig:
  - name: NodeResourcesFit
    args: {scoringStrategy: {type: MostAllocated}, ignoredResources: [example.com/foo]}
  - name: InterPodAffinity
    args: {hardPodAffinityWeight: 7}
)",
                   diags);
  REQUIRE(most);
  CHECK_FALSE(diags.HasErrors());
  const rt::Profile& p = most->front();
  CHECK(p.ScoreFile(*rt::FindInTreePlugin("NodeResourcesFit")) == "stdlib/most_allocated.policy");
  CHECK(rt::DefaultProfile().ScoreFile(*rt::FindInTreePlugin("NodeResourcesFit")) == "stdlib/least_allocated.policy");
  CHECK(p.ScoreFile(*rt::FindInTreePlugin("ImageLocality")) == "stdlib/image_locality.policy");
  CHECK(std::get<std::vector<std::string>>(p.params.at("NodeResourcesFit").at("ignoredResources")) ==
        std::vector<std::string>{"example.com/foo"});
  CHECK(std::get<int64_t>(p.params.at("InterPodAffinity").at("hardPodAffinityWeight")) == 7);

  DiagnosticSink refused;
  CHECK_FALSE(Read(R"(apiVersion: kubescheduler.config.k8s.io/v1
kind: KubeSchedulerConfiguration
profiles:
- pluginConfig:
  - name: ImageLocality
    args: {anything: 1}
)",
                   refused));
  REQUIRE(refused.HasErrors());
  CHECK(refused.All().front().message.find("plugin args for ImageLocality are not implemented") != std::string::npos);
}

TEST_CASE("the default spread joins with the plugin whose row says so") {
  size_t rows = 0;
  for (const rt::InTreePlugin& p : rt::InTreePlugins()) rows += p.default_spread ? 1 : 0;
  CHECK(rows == 1);
  CHECK(rt::FindInTreePlugin("PodTopologySpread")->default_spread);
  DiagnosticSink diags;
  auto off = Read(R"(apiVersion: kubescheduler.config.k8s.io/v1
kind: KubeSchedulerConfiguration
profiles:
- plugins: {multiPoint: {disabled: [{name: PodTopologySpread}]}}
)",
                  diags);
  REQUIRE(off);
  const rt::PluginSetting* spread = Setting(off->front(), "PodTopologySpread");
  REQUIRE(spread != nullptr);
  CHECK_FALSE(spread->filter);
  CHECK_FALSE(spread->score);
}

TEST_CASE("a param for every policy reaches those that declare it and no other") {
  driver::Compilation compilation;
  auto source = std::make_shared<const Source>("two.policy", R"(policy A "a"
  param kubernetesMinor: int = 34
  filter kubernetesMinor >= 34
    reason "old"

policy B "b"
  filter node.name != ""
    reason "unnamed"
)");
  lower::ParamValues params;
  params[lower::kEveryPolicy]["kubernetesMinor"] = int64_t{31};
  DiagnosticSink diags;
  const driver::CompiledFile* file = compilation.Add(source, diags, &params);
  REQUIRE_MESSAGE(file != nullptr, RenderAll(diags));
  CHECK_FALSE(diags.HasErrors());
  // The value reached A: its one filter compares a constant 31 now.
  bool found = false;
  for (const ir::Node& node : file->program.nodes) {
    if (const auto* c = std::get_if<ir::IntConst>(&node)) found = found || c->value == 31;
  }
  CHECK(found);

  // A value of the wrong type is refused, naming the policy that declares it.
  lower::ParamValues wrong;
  wrong[lower::kEveryPolicy]["kubernetesMinor"] = std::string("34");
  DiagnosticSink bad;
  CHECK(compilation.Add(source, bad, &wrong) == nullptr);
  REQUIRE(bad.HasErrors());
  CHECK(bad.All().front().message.find("`kubernetesMinor` of A") != std::string::npos);
  // A policy's own param of a name no policy declares is still an error.
  lower::ParamValues unknown;
  unknown["B"]["kubernetesMinor"] = int64_t{31};
  DiagnosticSink undeclared;
  CHECK(compilation.Add(source, undeclared, &unknown) == nullptr);
}
