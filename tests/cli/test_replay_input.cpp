#include <algorithm>
#include <string>
#include <vector>

#include <catch2/catch.hpp>

#include "cli/replay_input.h"
#include "common/error.h"
#include "test_util.h"
#include "trace/request.h"
#include "trace/workload.h"

namespace cli = kvsim::cli;
namespace trace = kvsim::trace;

namespace {

// The prefix hashes of every request of the run's temporary trace.
std::vector<std::vector<std::uint64_t>> hashes(const trace::RealRun& run,
                                               const cli::ReplayPrompts& prompts) {
  const cli::TempTrace temp(run, prompts);
  const auto reader = trace::open_workload(temp.workload());
  std::vector<std::vector<std::uint64_t>> out;
  trace::RequestSpec spec;
  while (reader->next(spec)) {
    CHECK(spec.prefix_block_tokens == cli::kReplayHashTokens);
    out.push_back(spec.prefix_hashes);
  }
  return out;
}

// The session id of every request of the run's temporary trace.
std::vector<std::string> sessions(const trace::RealRun& run, const cli::ReplayPrompts& prompts) {
  const cli::TempTrace temp(run, prompts);
  const auto reader = trace::open_workload(temp.workload());
  std::vector<std::string> out;
  trace::RequestSpec spec;
  while (reader->next(spec)) out.push_back(spec.session_id);
  return out;
}

trace::RealRun run_of(const std::vector<std::int64_t>& prompt_tokens) {
  trace::RealRun run;
  for (std::size_t i = 0; i < prompt_tokens.size(); ++i) {
    trace::RealRequest r;
    r.arrival_s = 0.5 * static_cast<double>(i);
    r.prompt_tokens = prompt_tokens[i];
    r.output_tokens = 4;
    run.requests.push_back(r);
  }
  return run;
}

}  // namespace

TEST_CASE("replayed prompts: distinct by default, a pool's repeats and shared system prompts",
          "[cli][replay]") {
  const trace::RealRun run = run_of({64, 64, 70, 64, 40});
  // Distinct: no block id in common between two requests.
  const auto distinct = hashes(run, {});
  REQUIRE(distinct.size() == 5);
  CHECK(distinct[0].size() == 4);  // 64 tokens: four 16-token blocks
  CHECK(distinct[4].size() == 2);  // 40 tokens: two full blocks
  for (std::size_t a = 0; a < distinct.size(); ++a) {
    for (std::size_t b = a + 1; b < distinct.size(); ++b) {
      for (std::uint64_t h : distinct[a]) {
        CHECK(std::find(distinct[b].begin(), distinct[b].end(), h) == distinct[b].end());
      }
    }
  }
  // A pool of 3 prompts, the first 40 tokens one of 2 system prompts: request i sends prompt
  // i mod 3, whose system prompt is (i mod 3) mod 2.
  cli::ReplayPrompts shared;
  shared.pool = 3;
  shared.groups = 2;
  shared.shared_tokens = 40;  // two whole blocks (the rest of the third is the prompt's own)
  CHECK(shared.describe() == "a pool of 3 prompts, 2 shared system prompts of 40 tokens");
  const auto h = hashes(run, shared);
  REQUIRE(h.size() == 5);
  CHECK(h[3] == h[0]);  // prompt 0 again, whole
  CHECK(std::vector<std::uint64_t>(h[4].begin(), h[4].end()) ==
        std::vector<std::uint64_t>(h[1].begin(), h[1].begin() + 2));  // prompt 1, shorter
  CHECK(h[2][0] == h[0][0]);  // prompts 0 and 2: system prompt 0
  CHECK(h[2][1] == h[0][1]);
  CHECK(h[2][2] != h[0][2]);  // then their own text
  CHECK(h[1][0] != h[0][0]);  // prompt 1: system prompt 1
  CHECK(h[2].size() == 4);    // 70 tokens: four full blocks
}

TEST_CASE("replayed prompts: a multi-turn conversation's turn goes on over its output",
          "[cli][replay]") {
  // Two conversations; turn 2 of conversation 0 (request 2) is turn 1's 64 + 4 tokens and a
  // 28-token question: 96 tokens.
  const trace::RealRun run = run_of({64, 50, 96});
  cli::ReplayPrompts chat;
  chat.pool = 2;
  chat.multi_turn = true;
  CHECK(chat.describe() ==
        "a pool of 2 prompts, each prompt a turn of its conversation, sent once the turn "
        "before it has its answer (multi-turn chat)");
  const auto h = hashes(run, chat);
  REQUIRE(h.size() == 3);
  CHECK(h[0].size() == 4);  // 64 + 4 output tokens: four full blocks
  CHECK(h[1].size() == 3);  // 50 + 4: three
  CHECK(h[2].size() == 6);  // 96 + 4: six
  // Turn 2 begins with turn 1's blocks, in the same places; then its own.
  CHECK(std::vector<std::uint64_t>(h[2].begin(), h[2].begin() + 4) == h[0]);
  CHECK(h[1][0] != h[0][0]);  // the other conversation
  // A turn whose output fills a block past its prompt's: the id is there (68 + 12 = 80 tokens).
  trace::RealRun longer = run_of({68});
  longer.requests[0].output_tokens = 12;
  CHECK(hashes(longer, chat)[0].size() == 5);
  // Each turn names its conversation, and the workload sends a turn once the one before it of
  // its conversation has ended.
  CHECK(sessions(run, chat) ==
        std::vector<std::string>{"conversation 0", "conversation 1", "conversation 0"});
  CHECK(cli::TempTrace(run, chat).workload().serial_sessions);
  // Single turns: the prompt's blocks only, no conversation.
  chat.multi_turn = false;
  CHECK(hashes(run, chat)[0].size() == 4);
  CHECK(hashes(longer, chat)[0].size() == 4);
  CHECK(sessions(run, chat) == std::vector<std::string>{"", "", ""});
  CHECK_FALSE(cli::TempTrace(run, chat).workload().serial_sessions);
}

TEST_CASE("read_replay_input: the client's cap and prompts, flags checked", "[cli][replay]") {
  const std::string dir = kvsim::test::temp_dir();
  const std::string run = kvsim::test::write_temp_file(
      dir, "run.jsonl",
      R"({"arrival_time_s": 0.0, "input_tokens": 100, "output_tokens": 20, "first_token_time": 0.06, "end_time": 0.70}
{"arrival_time_s": 0.5, "input_tokens": 80, "output_tokens": 10, "first_token_time": 0.56, "end_time": 0.90}
)");
  const cli::ReplayInput plain = cli::read_replay_input(run, {}, {});
  CHECK(plain.run.requests.size() == 2);
  CHECK(plain.run.concurrency == 0);
  CHECK(plain.prompts.describe().empty());

  cli::ReplayClient client;
  client.max_concurrency = 3;
  client.prompt_pool = 1;
  client.shared_prefix_tokens = 32;  // one system prompt when their number is not given
  const cli::ReplayInput in = cli::read_replay_input(run, {}, client);
  CHECK(in.run.concurrency == 3);
  CHECK(in.run.arrivals.size() > plain.run.arrivals.size());
  CHECK(in.run.arrivals.substr(plain.run.arrivals.size()) ==
        ", at most 3 outstanding (--max-concurrency)");
  CHECK(in.prompts.describe() == "a pool of 1 prompt, 1 shared system prompt of 32 tokens");

  const auto fails = [&run](cli::ReplayClient c, const std::string& what) {
    try {
      (void)cli::read_replay_input(run, {}, c);
      FAIL("accepted: " << what);
    } catch (const kvsim::Error& e) {
      CHECK(std::string(e.what()).find(what) != std::string::npos);
    }
  };
  cli::ReplayClient bad;
  bad.max_concurrency = 0;
  fails(bad, "--max-concurrency: expected the client's cap");
  bad = {};
  bad.prompt_pool = 0;
  fails(bad, "--prompt-pool: expected a positive number");
  bad = {};
  bad.shared_prefix_prompts = 2;
  fails(bad, "--shared-prefix-prompts: needs --shared-prefix-tokens");
  bad.shared_prefix_tokens = 0;
  fails(bad, "--shared-prefix-tokens: expected a positive number");
  bad = {};
  bad.multi_turn_chat = true;
  fails(bad, "--multi-turn-chat: needs the conversations: --prompt-pool N");
  bad.prompt_pool = 2;
  CHECK(cli::read_replay_input(run, {}, bad).prompts.multi_turn);
  bad = {};
  bad.run_config = dir + "/config.yaml";  // never read: the run is not inference-perf's
  fails(bad, "--run-config: an inference-perf configuration goes with an inference-perf report");
}
