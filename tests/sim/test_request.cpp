// sim/request.cpp: state and reason names, and the slot pool that reuses ended requests' slots.
#include <string>

#include <catch2/catch.hpp>

#include "sim/request.h"

using namespace kvsim::sim;

TEST_CASE("request: every state and reject reason has its report name", "[sim][request]") {
  CHECK(std::string(request_state_name(RequestState::kWaiting)) == "waiting");
  CHECK(std::string(request_state_name(RequestState::kPrefill)) == "prefill");
  CHECK(std::string(request_state_name(RequestState::kDecode)) == "decode");
  CHECK(std::string(request_state_name(RequestState::kSwapped)) == "swapped");
  CHECK(std::string(request_state_name(RequestState::kSwappingIn)) == "swapping_in");
  CHECK(std::string(request_state_name(RequestState::kFinished)) == "finished");
  CHECK(std::string(request_state_name(RequestState::kRejected)) == "rejected");
  CHECK(std::string(reject_reason_name(RejectReason::kNone)).empty());
  CHECK(std::string(reject_reason_name(RejectReason::kPromptTooLong)) == "prompt_too_long");
  CHECK(std::string(reject_reason_name(RejectReason::kTooLong)) == "too_long");
  CHECK(std::string(reject_reason_name(RejectReason::kNeverFits)) == "never_fits");
}

TEST_CASE("request pool: released slots are reused, last released first, as cleared requests",
          "[sim][request]") {
  RequestPool pool;
  const RequestPool::Slot a = pool.acquire();
  const RequestPool::Slot b = pool.acquire();
  const RequestPool::Slot c = pool.acquire();
  CHECK(a == 0);
  CHECK(b == 1);
  CHECK(c == 2);
  CHECK(pool.num_live() == 3);
  CHECK(pool.capacity() == 3);

  Request& r = pool[b];
  r.id = 42;
  r.prompt_tokens = 100;
  r.state = RequestState::kDecode;
  r.first_token_ns = 7;
  r.block_ids = {1, 2, 3};
  pool.release(a);
  pool.release(b);
  CHECK(pool.num_live() == 1);
  CHECK(pool.capacity() == 3);  // memory follows the peak of live requests

  // The last slot released comes back first, and it holds a fresh request.
  const RequestPool::Slot again = pool.acquire();
  CHECK(again == b);
  const Request& fresh = pool[again];
  CHECK(fresh.id == 0);
  CHECK(fresh.prompt_tokens == 0);
  CHECK(fresh.state == RequestState::kWaiting);
  CHECK(fresh.first_token_ns == -1);
  CHECK(fresh.block_ids.empty());
  CHECK(pool.acquire() == a);
  CHECK(pool.acquire() == 3);  // no free slot left: the pool grows
  CHECK(pool.num_live() == 4);
  CHECK(pool.capacity() == 4);
}

TEST_CASE("request: final tokens are prompt plus output", "[sim][request]") {
  Request r;
  r.prompt_tokens = 1000;
  r.output_tokens = 24;
  CHECK(r.final_tokens() == 1024);
}
