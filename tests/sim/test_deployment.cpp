// sim/deployment.cpp: a resolved deployment to the KV budget per GPU, the allocator options
// sized from it, the cost model, and located errors when it cannot run.
#include <string>

#include <catch2/catch.hpp>

#include "common/error.h"
#include "cost/cost_fixtures.h"
#include "memory/allocator.h"
#include "sim/deployment.h"

using namespace kvsim;
using Catch::Matchers::Contains;

namespace {

sim::DeploymentInputs llama70(const model::ModelSpec& m, const model::HardwareSpec& hw,
                              std::int64_t tp) {
  sim::DeploymentInputs in;
  in.model = &m;
  in.hardware = &hw;
  in.tensor_parallel_size = tp;
  in.kv_format.dtype = model::Dtype::kBf16;
  in.budget.activation_reserve_bytes = 1'000'000'000;
  in.budget.runtime_overhead_bytes = 2'000'000'000;
  in.max_model_len = 8192;
  return in;
}

std::string field_and_message(const std::function<void()>& f) {
  try {
    f();
  } catch (const Error& e) {
    return e.location().field + ": " + e.message();
  }
  return "(no error)";
}

}  // namespace

TEST_CASE("deployment: the allocator gets the budget per GPU and the bytes per token per GPU",
          "[sim][deployment]") {
  const model::ModelSpec m = test::llama3_70b();
  const model::HardwareSpec hw = test::h100_sxm();
  sim::DeploymentInputs in = llama70(m, hw, 4);
  in.allocator = memory::AllocatorKind::kContiguousOracle;
  in.placement = memory::Placement::kFirstFit;
  in.watermark = 0.05;
  in.block_size = 32;
  const sim::BuiltDeployment d = sim::build_deployment(in, sim::SimOptions{});
  REQUIRE(d.budget().fits);
  // 80 GB × 0.9 − weights / 4 − 1 GB − 2 GB.
  CHECK(d.budget().kv_budget_bytes ==
        72'000'000'000ULL - d.budget().weights_bytes - 3'000'000'000ULL);
  CHECK(d.capacity().bytes_per_token == 81'920);  // 80 layers × K,V × 2 heads × 128 × 2 B
  const memory::AllocatorOptions& a = d.allocator_options();
  CHECK(a.kind == memory::AllocatorKind::kContiguousOracle);
  CHECK(a.placement == memory::Placement::kFirstFit);
  CHECK(a.capacity_bytes == d.budget().kv_budget_bytes);
  CHECK(a.bytes_per_slot == 81'920);
  CHECK(a.block_size == 32);
  CHECK(a.watermark == 0.05);
  CHECK(a.max_seq_len == 8192);
  CHECK(a.groups.empty());  // one full-attention group: not hybrid
  CHECK_FALSE(a.enable_prefix_caching);
  CHECK(a.cpu_swap_bytes == 0);
}

TEST_CASE(
    "deployment: setup takes block size and length from the deployment, serving options "
    "from the run",
    "[sim][deployment]") {
  const model::ModelSpec m = test::llama3_70b();
  const model::HardwareSpec hw = test::h100_sxm();
  const sim::BuiltDeployment d = sim::build_deployment(llama70(m, hw, 4), sim::SimOptions{});
  sim::SimOptions o;
  o.block_size = 999;
  o.scheduler.max_model_len = 1;
  o.enable_prefix_caching = true;
  o.scheduler.preemption = sim::PreemptionMode::kSwap;
  const sim::SimSetup s = d.setup(o);
  CHECK(s.options.block_size == 16);
  CHECK(s.options.scheduler.max_model_len == 8192);
  CHECK(s.options.enable_prefix_caching);
  CHECK(s.cost_model == &d.cost_model());
  const auto first = s.make_allocator();
  const auto second = s.make_allocator();  // a fresh allocator per replica
  CHECK(first.get() != second.get());
  // Paged: whole blocks of 16 tokens of the budget.
  CHECK(first->accounting(nullptr).capacity ==
        static_cast<std::int64_t>(d.budget().kv_budget_bytes / 81'920 / 16 * 16));
  CHECK(first->bytes_per_slot() == 81'920);
  // Swap space is handed to the allocator only with swap preemption.
  const sim::BuiltDeployment swapping = sim::build_deployment(llama70(m, hw, 4), o);
  CHECK(swapping.allocator_options().cpu_swap_bytes == o.scheduler.swap_space_bytes);
  CHECK(swapping.allocator_options().enable_prefix_caching);
}

TEST_CASE("deployment: sliding-window layers make allocator groups", "[sim][deployment]") {
  const model::ModelSpec m = test::mistral_7b_window();
  const model::HardwareSpec hw = test::h100_sxm();
  sim::DeploymentInputs in = llama70(m, hw, 1);
  in.max_model_len = 4096;
  const sim::BuiltDeployment d = sim::build_deployment(in, sim::SimOptions{});
  REQUIRE(d.allocator_options().groups.size() == 1);
  CHECK(d.allocator_options().groups[0].sliding_window == m.attention.sliding_window);
  CHECK(d.allocator_options().groups[0].bytes_per_slot == d.capacity().bytes_per_token);
}

TEST_CASE("deployment: a model that does not fit, or a sequence that cannot, is a clear error",
          "[sim][deployment]") {
  const model::ModelSpec m = test::llama3_70b();
  const model::HardwareSpec hw = test::h100_sxm();
  // 141 GB of weights: at TP 2, 70.6 GB + 3 GB per GPU still exceed 72 GB usable.
  const std::string no_fit =
      field_and_message([&] { (void)sim::build_deployment(llama70(m, hw, 1), sim::SimOptions{}); });
  CHECK_THAT(no_fit,
             Contains("--gpu: llama-3-70b does not fit h100-sxm at tensor parallel size 1") &&
                 Contains("it needs --tensor-parallel-size 4 or more"));
  sim::DeploymentInputs tight = llama70(m, hw, 4);
  tight.max_model_len = 100'000'000;  // longer than the whole cache holds
  CHECK_THAT(field_and_message([&] { (void)sim::build_deployment(tight, sim::SimOptions{}); }),
             Contains("--max-model-len: the KV cache of one replica") &&
                 Contains("cannot hold one sequence of 100,000,000 tokens"));
}
