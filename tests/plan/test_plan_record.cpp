// plan/plan_record.cpp: a deployment's record to JSON and back (the --resume file), and located
// errors for a record of another version.
#include <string>

#include <catch2/catch.hpp>

#include "common/error.h"
#include "plan/plan_record.h"

using namespace kvsim;
using namespace kvsim::plan;
using Catch::Matchers::Contains;

namespace {

DeploymentRecord full_record() {
  DeploymentRecord r;
  r.status = "found";
  r.base_rate_rps = 2.5;
  r.num_requests = 400;
  r.max_rate_rps = 7.25;
  r.limiting_slo = "ttft";
  r.fail_rate_rps = 7.5;
  r.converged = false;
  r.probes = {{2.5, true, ""}, {10.0, false, "ttft"}, {7.25, true, ""}};
  AtMaxRecord at;
  at.rate_rps = 7.25;
  at.attainment = 0.995;
  at.per_user_tokens_per_s = 40.0;
  at.observed = {{"ttft_p99", 0.75}};
  at.metrics = {{"output_tokens_per_s", 1234.5}, {"e2e_s", {{"mean", 3.25}}}};
  at.output_tokens_per_s = 1234.5;
  at.mean_e2e_s = 3.25;
  at.memory = {{"peak_used_bytes", 1000}};
  r.at_max = at;
  AboveRecord above;
  above.rate_rps = 7.5;
  above.limiting = "ttft";
  above.attainment = 0.9;
  above.observed = {{"ttft_p99", 2.5}};
  above.saturation = "growing";
  r.above = above;
  TargetSizing s;
  s.target_rate_rps = 20;
  s.estimate = 3;
  s.replicas_needed = 4;
  s.checks = {{3, false, "tpot"}, {4, true, ""}};
  r.sizing = s;
  return r;
}

}  // namespace

TEST_CASE("plan record: to_json and record_from_json are inverses", "[plan][record]") {
  const DeploymentRecord r = full_record();
  const RecordJson j = to_json(r);
  CHECK(j["status"] == "found");
  CHECK(j["max_rate_rps"] == 7.25);
  CHECK(j["probes"].size() == 3);
  CHECK(j["probes"][0]["limiting"].is_null());  // "" is written as null
  CHECK(j["probes"][1]["limiting"] == "ttft");
  CHECK(j["error"].is_null());
  CHECK(j["sizing"]["replicas_needed"] == 4);
  const DeploymentRecord back = record_from_json(j, "results.jsonl:3");
  CHECK(back.status == "found");
  CHECK(back.base_rate_rps == 2.5);
  CHECK(back.num_requests == 400);
  CHECK(back.limiting_slo == "ttft");
  CHECK(back.fail_rate_rps == 7.5);
  CHECK_FALSE(back.converged);
  REQUIRE(back.probes.size() == 3);
  CHECK(back.probes[1].rate_rps == 10.0);
  CHECK_FALSE(back.probes[1].ok);
  CHECK(back.probes[1].limiting == "ttft");
  CHECK(back.probes[2].limiting.empty());
  REQUIRE(back.at_max);
  CHECK(back.at_max->attainment == 0.995);
  CHECK(back.at_max->output_tokens_per_s == 1234.5);
  CHECK(back.at_max->mean_e2e_s == 3.25);
  REQUIRE(back.above);
  CHECK(back.above->saturation == "growing");
  REQUIRE(back.sizing);
  CHECK(back.sizing->checks.size() == 2);
  CHECK(back.sizing->checks[0].limiting == "tpot");
  CHECK(to_json(back) == j);  // byte for byte what --resume wrote
}

TEST_CASE("plan record: a deployment that cannot run has only its status and error",
          "[plan][record]") {
  const DeploymentRecord r = error_record("the weights need 140 GB, the GPU has 80 GB");
  CHECK(r.status == "does_not_fit");
  CHECK(r.error == "the weights need 140 GB, the GPU has 80 GB");
  const RecordJson j = to_json(r);
  CHECK(j["at_max"].is_null());
  CHECK(j["above"].is_null());
  CHECK(j["base_rate_rps"].is_null());
  CHECK_FALSE(j.contains("sizing"));  // only runs with a target have one
  const DeploymentRecord back = record_from_json(j, "r");
  CHECK(back.status == "does_not_fit");
  CHECK(back.error == r.error);
  CHECK_FALSE(back.at_max);
  CHECK_FALSE(back.sizing);
  CHECK(to_json(back) == j);
}

TEST_CASE("plan record: a record of another version is an error naming where it came from",
          "[plan][record]") {
  RecordJson j = to_json(full_record());
  const auto error_of = [](const RecordJson& doc) {
    try {
      record_from_json(doc, "results.jsonl:7");
    } catch (const Error& e) {
      CHECK(e.location().field == "results.jsonl:7");
      return e.message();
    }
    return std::string("(no error)");
  };
  RecordJson missing = j;
  missing.erase("max_rate_rps");
  CHECK_THAT(error_of(missing),
             Contains("not a deployment record of this kvsim version") && Contains("max_rate_rps"));
  RecordJson wrong = j;
  wrong["converged"] = "yes";
  CHECK_THAT(error_of(wrong), Contains("'converged' is not a boolean"));
  RecordJson text = j;
  text["status"] = 3;
  CHECK_THAT(error_of(text), Contains("'status' is not a string"));
  CHECK_THAT(error_of(RecordJson::array()), Contains("not a deployment record"));
}
