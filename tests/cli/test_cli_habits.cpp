// vLLM users' habits and tables that hide nothing: "did you mean" for misspelt subcommands and
// flags, one warning for a flag that does nothing here, CSV rows that carry their inputs, and
// the compare table's unfinished / SLO rows and ratios.
#include <fcntl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>

#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include "test_util.h"

using kvsim::test::run_kvsim;
using kvsim::test::slurp;
using kvsim::test::source_dir;
using kvsim::test::temp_dir;
using kvsim::test::write_temp_file;

namespace {

std::vector<std::string> small_run(std::vector<std::string> extra) {
  std::vector<std::string> args = {
      "--model", "llama-3-8b",     "--gpu", "h100-sxm",     "--arrival", "poisson",      "--rate",
      "5",       "--num-requests", "60",    "--prompt-len", "200",       "--output-len", "20"};
  args.insert(args.end(), extra.begin(), extra.end());
  return args;
}

std::vector<std::string> with(std::string command, std::vector<std::string> args) {
  args.insert(args.begin(), std::move(command));
  return args;
}

// Runs kvsim with stderr on a pseudo-terminal (stdout discarded); returns what the terminal got.
std::string stderr_on_terminal(const std::vector<std::string>& args) {
  const int master = ::posix_openpt(O_RDWR | O_NOCTTY);
  REQUIRE(master >= 0);
  REQUIRE(::grantpt(master) == 0);
  REQUIRE(::unlockpt(master) == 0);
  const std::string slave_name = ::ptsname(master);
  const pid_t pid = ::fork();
  REQUIRE(pid >= 0);
  if (pid == 0) {
    const int slave = ::open(slave_name.c_str(), O_RDWR);
    const int null = ::open("/dev/null", O_WRONLY);
    if (slave < 0 || null < 0) ::_exit(127);
    ::dup2(slave, STDERR_FILENO);
    ::dup2(null, STDOUT_FILENO);
    std::vector<std::string> copy = args;
    std::vector<char*> argv;
    std::string binary = KVSIM_BINARY;
    argv.push_back(binary.data());
    for (auto& a : copy) argv.push_back(a.data());
    argv.push_back(nullptr);
    ::execv(binary.c_str(), argv.data());
    ::_exit(127);
  }
  std::string out;
  char buf[4096];
  for (;;) {
    const ssize_t n = ::read(master, buf, sizeof buf);
    if (n <= 0) break;  // EIO once the child has closed the terminal
    out.append(buf, static_cast<std::size_t>(n));
  }
  int status = 0;
  ::waitpid(pid, &status, 0);
  ::close(master);
  CHECK(WIFEXITED(status));
  CHECK(WEXITSTATUS(status) == 0);
  return out;
}

}  // namespace

TEST_CASE("cli: simulate and compare show progress on a terminal, nothing when piped",
          "[cli][habits]") {
  const std::vector<std::string> workload = {
      "--model",      "llama-3-8b", "--gpu",          "h100-sxm", "--arrival",    "poisson",
      "--rate",       "50",         "--num-requests", "60000",    "--prompt-len", "100",
      "--output-len", "30",         "--format",       "json"};
  std::vector<std::string> args = {"simulate"};
  args.insert(args.end(), workload.begin(), workload.end());
  const std::string tty = stderr_on_terminal(args);
  CHECK(tty.find("simulate: simulated ") != std::string::npos);
  CHECK(tty.find(" requests done, ") != std::string::npos);
  CHECK(tty.find(" req/s") != std::string::npos);
  const auto piped = run_kvsim(args);
  REQUIRE(piped.exit_code == 0);
  CHECK(piped.err.empty());
  args[0] = "compare";
  args.insert(args.end(), {"--allocator", "paged,contiguous-oracle"});
  const std::string compare_tty = stderr_on_terminal(args);
  CHECK(compare_tty.find("compare paged / vllm-v1: simulated ") != std::string::npos);
  CHECK(compare_tty.find("compare contiguous-oracle / vllm-v1: simulated ") != std::string::npos);
}

TEST_CASE("cli: plan draws its bar with the same progress line, kept at the end", "[cli][habits]") {
  const std::string tty = stderr_on_terminal(
      with("plan", small_run({"--tensor-parallel-size", "1,2", "--slo-ttft", "500",
                              "--search-max-probes", "4", "--format", "json"})));
  // Redrawn in place (carriage return, erase to the end of the line), ended by a newline.
  CHECK(tty.find("\r\033[Kplan [") != std::string::npos);
  CHECK(tty.find("2/2  100%") != std::string::npos);
  CHECK(tty.find("ETA 0:00\r\n") != std::string::npos);  // the terminal turns \n into \r\n
}

TEST_CASE("cli: a misspelt subcommand or flag gets 'did you mean'", "[cli][habits]") {
  auto r = run_kvsim({"simulat", "--model", "llama-3-8b"});
  CHECK(r.exit_code == 2);
  CHECK(r.err.find("did you mean 'simulate'?") != std::string::npos);
  r = run_kvsim({"trace", "stat", "x.csv"});
  CHECK(r.exit_code == 2);
  CHECK(r.err.find("did you mean 'stats'?") != std::string::npos);
  r = run_kvsim(with("simulate", small_run({"--max-num-seq", "8"})));
  CHECK(r.exit_code == 2);
  CHECK(r.err.find("did you mean '--max-num-seqs'?") != std::string::npos);
  r = run_kvsim({"diff", "a.json", "b.json", "--rtl", "0.1"});
  CHECK(r.exit_code == 2);
  CHECK(r.err.find("did you mean '--rtol'?") != std::string::npos);
  r = run_kvsim({"frobnicate"});
  CHECK(r.exit_code == 2);
  CHECK(r.err.find("did you mean") == std::string::npos);  // nothing close
}

TEST_CASE("cli: summary CSV rows carry the deployment's inputs", "[cli][habits]") {
  auto r = run_kvsim(with("simulate", small_run({"--format", "csv", "--tp", "2"})));
  REQUIRE(r.exit_code == 0);
  CHECK(r.out.rfind("model,gpu,tensor_parallel_size,replicas,kv_cache_dtype,kv_dtype,allocator,"
                    "placement,scheduler,preemption,block_size,max_num_seqs,"
                    "max_num_batched_tokens,enable_prefix_caching,workload,seed,"
                    "requests_completed,",
                    0) == 0);
  const std::string row = r.out.substr(r.out.find('\n') + 1);
  CHECK(row.rfind("llama-3-8b,h100-sxm,2,1,auto,bf16,paged,buddy,vllm-v1,recompute,16,1024,", 0) ==
        0);
  r = run_kvsim(
      with("compare", small_run({"--format", "csv", "--allocator", "paged,contiguous-oracle"})));
  REQUIRE(r.exit_code == 0);
  CHECK(r.out.rfind("label,model,gpu,", 0) == 0);
  CHECK(r.out.find("\npaged / vllm-v1,llama-3-8b,h100-sxm,1,1,auto,bf16,paged,") !=
        std::string::npos);
  CHECK(r.out.find("\ncontiguous-oracle / vllm-v1,llama-3-8b,h100-sxm,1,1,auto,bf16,"
                   "contiguous-oracle,") != std::string::npos);
}

TEST_CASE("cli: --html leaves the JSON report unchanged", "[cli][habits][html]") {
  const std::string dir = temp_dir();
  const auto plain = run_kvsim(with("simulate", small_run({"--format", "json"})));
  const auto html =
      run_kvsim(with("simulate", small_run({"--format", "json", "--html", dir + "/r.html"})));
  REQUIRE(plain.exit_code == 0);
  REQUIRE(html.exit_code == 0);
  CHECK(plain.out == html.out);
  const std::string page = slurp(dir + "/r.html");
  CHECK(page.rfind("<!DOCTYPE html>", 0) == 0);
  CHECK(page.find("\"timeline\":{\"t\":[") != std::string::npos);
}

TEST_CASE("cli: the default JSON leaves out per-layer lists, --verbose and kv keep them",
          "[cli][habits]") {
  const auto plain = run_kvsim(with("simulate", small_run({"--format", "json"})));
  const auto verbose = run_kvsim(with("simulate", small_run({"--format", "json", "--verbose"})));
  const auto compare = run_kvsim(
      with("compare",
           small_run({"--format", "json", "--verbose", "--allocator", "paged,contiguous-max"})));
  const auto kv =
      run_kvsim({"kv", "--model", "llama-3-8b", "--gpu", "h100-sxm", "--format", "json"});
  REQUIRE(plain.exit_code == 0);
  REQUIRE(verbose.exit_code == 0);
  REQUIRE(compare.exit_code == 0);
  REQUIRE(kv.exit_code == 0);
  // The stable per-token array stays (DESIGN.md's kv object); the layer index lists do not.
  const auto kv_of = [](const std::string& text) {
    const nlohmann::json doc = nlohmann::json::parse(text);
    return doc.contains("runs") ? doc["runs"][0]["kv"] : doc["kv"];
  };
  const nlohmann::json plain_kv = kv_of(plain.out);
  CHECK(plain_kv["bytes_per_token_per_layer"].size() == 32);
  CHECK_FALSE(plain_kv["groups"][0].contains("layers"));
  for (const auto* r : {&verbose, &compare, &kv}) {
    const nlohmann::json k = kv_of(r->out);
    CHECK(k["bytes_per_token_per_layer"].size() == 32);
    REQUIRE(k["groups"][0]["layers"].size() == 32);
    CHECK(k["groups"][0]["layers"][31] == 31);
  }
}
