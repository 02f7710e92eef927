#include "plan/sweep_runner.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <exception>
#include <mutex>
#include <optional>
#include <thread>
#include <unordered_map>

#include <nlohmann/json.hpp>

#include "common/error.h"
#include "common/progress.h"
#include "common/rng.h"

namespace kvsim::plan {
namespace {

constexpr std::string_view kLineHead = "{\"key\":\"";
constexpr std::string_view kLineMid = "\",\"result\":";
constexpr std::size_t kKeyDigits = 16;

bool is_hex_key(std::string_view s) {
  return s.size() == kKeyDigits && std::all_of(s.begin(), s.end(), [](char c) {
           return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f');
         });
}

std::string system_error(const std::string& what) {
  return what + ": " + std::strerror(errno);
}

// The results file: read once at the start, appended to by every worker.
// Invariants: every byte appended is a whole "...\n" line written by one write() call (short
// writes are continued); fd_ is open for appending from open() until destruction.
class ResultsFile {
 public:
  explicit ResultsFile(std::string path) : path_(std::move(path)) {}
  const std::string& path() const { return path_; }
  ~ResultsFile() {
    if (fd_ >= 0) ::close(fd_);
  }
  ResultsFile(const ResultsFile&) = delete;
  ResultsFile& operator=(const ResultsFile&) = delete;

  // Reads the records (first occurrence of a key wins). With `repair`, a torn last line is cut
  // off the file so that appends start on a fresh line; without it, it is only skipped.
  std::unordered_map<std::string, std::string> load(bool repair) {
    std::unordered_map<std::string, std::string> records;
    const int fd = ::open(path_.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0) {
      if (errno == ENOENT) return records;
      throw Error({path_, 0, 0, ""}, system_error("cannot read the results file"));
    }
    std::string text;
    char buf[1 << 16];
    for (;;) {
      const ssize_t n = ::read(fd, buf, sizeof buf);
      if (n < 0 && errno == EINTR) continue;
      if (n < 0) {
        ::close(fd);
        throw Error({path_, 0, 0, ""}, system_error("cannot read the results file"));
      }
      if (n == 0) break;
      text.append(buf, static_cast<std::size_t>(n));
    }
    ::close(fd);

    std::size_t pos = 0;
    int line_no = 0;
    while (pos < text.size()) {
      const std::size_t end = text.find('\n', pos);
      ++line_no;
      if (end == std::string::npos) {
        // Torn by an interruption mid-write: the job it was for simply runs again.
        if (repair && ::truncate(path_.c_str(), static_cast<off_t>(pos)) != 0) {
          throw Error({path_, line_no, 0, ""}, system_error("cannot cut the torn last line"));
        }
        break;
      }
      const std::string_view line(text.data() + pos, end - pos);
      pos = end + 1;
      if (line.empty()) continue;
      const std::size_t payload_at = kLineHead.size() + kKeyDigits + kLineMid.size();
      const bool shaped = line.size() > payload_at && line.back() == '}' &&
                          line.substr(0, kLineHead.size()) == kLineHead &&
                          is_hex_key(line.substr(kLineHead.size(), kKeyDigits)) &&
                          line.substr(kLineHead.size() + kKeyDigits, kLineMid.size()) == kLineMid;
      if (!shaped || !nlohmann::json::accept(line)) {
        throw Error({path_, line_no, 0, ""},
                    "not a kvsim results line (expected {\"key\":...,\"result\":...}); is this "
                    "the right --resume file?");
      }
      std::string key(line.substr(kLineHead.size(), kKeyDigits));
      std::string payload(line.substr(payload_at, line.size() - 1 - payload_at));
      records.emplace(std::move(key), std::move(payload));
    }
    return records;
  }

  void open_for_append() {
    fd_ = ::open(path_.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
    if (fd_ < 0) throw Error({path_, 0, 0, ""}, system_error("cannot write the results file"));
  }

  // Appends one record and flushes it to the disk. Thread-safe.
  void append(const std::string& key, const std::string& payload) {
    std::string line;
    line.reserve(kLineHead.size() + key.size() + kLineMid.size() + payload.size() + 2);
    line.append(kLineHead).append(key).append(kLineMid).append(payload).append("}\n");
    std::lock_guard<std::mutex> lock(mu_);
    std::size_t written = 0;
    while (written < line.size()) {
      const ssize_t n = ::write(fd_, line.data() + written, line.size() - written);
      if (n < 0 && errno == EINTR) continue;
      if (n < 0) throw Error({path_, 0, 0, ""}, system_error("cannot append to the results file"));
      written += static_cast<std::size_t>(n);
    }
    if (::fdatasync(fd_) != 0) {
      throw Error({path_, 0, 0, ""}, system_error("cannot flush the results file"));
    }
  }

 private:
  std::string path_;
  int fd_ = -1;
  std::mutex mu_;
};

// Rank-to-root transport of (unique job, result) pairs: "u\tresult\n" lines.
std::string pack(const std::vector<std::pair<std::size_t, const std::string*>>& items) {
  std::string out;
  for (const auto& [u, payload] : items) {
    out.append(std::to_string(u)).push_back('\t');
    out.append(*payload).push_back('\n');
  }
  return out;
}

void unpack(const std::string& packed, std::vector<std::optional<std::string>>& results) {
  std::size_t pos = 0;
  while (pos < packed.size()) {
    const std::size_t tab = packed.find('\t', pos);
    const std::size_t end = packed.find('\n', tab);
    const std::size_t u = std::stoull(packed.substr(pos, tab - pos));
    results.at(u) = packed.substr(tab + 1, end - tab - 1);
    pos = end + 1;
  }
}

std::string clock_text(double seconds) {
  const auto s = static_cast<long long>(std::llround(std::max(0.0, seconds)));
  char buf[32];
  if (s >= 3600) {
    std::snprintf(buf, sizeof buf, "%lld:%02lld:%02lld", s / 3600, (s / 60) % 60, s % 60);
  } else {
    std::snprintf(buf, sizeof buf, "%lld:%02lld", s / 60, s % 60);
  }
  return buf;
}

}  // namespace

std::string job_key(std::string_view canonical_inputs) {
  std::uint64_t h = 14695981039346656037ull;  // FNV-1a 64 offset basis
  for (const unsigned char c : canonical_inputs) {
    h ^= c;
    h *= 1099511628211ull;
  }
  h = mix64(h ^ static_cast<std::uint64_t>(canonical_inputs.size()));
  char buf[kKeyDigits + 1];
  std::snprintf(buf, sizeof buf, "%016llx", static_cast<unsigned long long>(h));
  return buf;
}

// ---------------------------------------------------------------------------------------------
// ProgressBar

struct ProgressBar::State {
  State(std::string label_in, std::int64_t total_in, std::int64_t already_done, bool enabled)
      : label(std::move(label_in)),
        total(total_in),
        done(already_done),
        done_before(already_done),
        line(enabled, ProgressLine::AtEnd::kKeep) {}

  // The bar for the current counts (called under the line's lock, so `done` is read once).
  ProgressLine::Text text() {
    const std::int64_t d = done.load();
    return [this, d](double elapsed) {
      const std::int64_t done_now = d - done_before;
      const double eta =
          done_now > 0 ? elapsed / static_cast<double>(done_now) * static_cast<double>(total - d)
                       : -1.0;
      return render(label, d, total, elapsed, eta);
    };
  }

  const std::string label;
  const std::int64_t total;
  std::atomic<std::int64_t> done;
  const std::int64_t done_before;
  ProgressLine line;
};

ProgressBar::ProgressBar(std::string label, std::int64_t total, std::int64_t already_done,
                         bool enabled)
    : state_(std::make_unique<State>(std::move(label), total, already_done, enabled)) {
  state_->line.update(state_->text());
}

ProgressBar::~ProgressBar() {
  finish();
}

void ProgressBar::tick() {
  const std::int64_t done = ++state_->done;
  state_->line.update(state_->text(), /*force=*/done >= state_->total);
}

void ProgressBar::finish() {
  state_->line.finish(state_->text());
}

std::string ProgressBar::render(const std::string& label, std::int64_t done, std::int64_t total,
                                double elapsed_s, double eta_s) {
  constexpr int kWidth = 30;
  const double fraction = total > 0 ? static_cast<double>(done) / static_cast<double>(total) : 1.0;
  const int filled = static_cast<int>(std::floor(fraction * kWidth));
  std::string bar = label + " [" + std::string(filled, '#') + std::string(kWidth - filled, '-') +
                    "] " + std::to_string(done) + "/" + std::to_string(total);
  char pct[16];
  std::snprintf(pct, sizeof pct, "  %3d%%", static_cast<int>(std::floor(fraction * 100.0)));
  bar += pct;
  bar += "  elapsed " + clock_text(elapsed_s);
  bar += "  ETA " + (done >= total ? std::string("0:00")
                     : eta_s < 0   ? std::string("--:--")
                                   : clock_text(eta_s));
  return bar;
}

// ---------------------------------------------------------------------------------------------
// run_sweep

namespace {

// Distinct keys in first-occurrence order: which distinct job each index is, and the first index
// of each distinct job.
struct UniqueKeys {
  std::vector<std::size_t> unique_of_index;
  std::vector<std::size_t> first_index;
  std::size_t size() const { return first_index.size(); }
};

UniqueKeys unique_keys(const std::vector<std::string>& keys) {
  UniqueKeys u;
  std::unordered_map<std::string, std::size_t> unique_of_key;
  u.unique_of_index.resize(keys.size());
  for (std::size_t i = 0; i < keys.size(); ++i) {
    const auto [it, inserted] = unique_of_key.emplace(keys[i], u.first_index.size());
    if (inserted) u.first_index.push_back(i);
    u.unique_of_index[i] = it->second;
  }
  return u;
}

// Opens the results file (rank 0 repairs a torn tail before anyone appends) and fills `results`
// with the records it holds; returns how many were resumed.
std::int64_t resume_from(ResultsFile& file, const Cluster& cluster,
                         const std::vector<std::string>& keys, const UniqueKeys& u,
                         std::vector<std::optional<std::string>>& results) {
  std::unordered_map<std::string, std::string> records;
  std::exception_ptr load_error;
  if (cluster.rank() == 0) {
    try {
      records = file.load(/*repair=*/true);
      file.open_for_append();
    } catch (...) {
      load_error = std::current_exception();
    }
  }
  if (!cluster.all_ok(load_error == nullptr)) {
    if (load_error) std::rethrow_exception(load_error);
    throw Error({file.path(), 0, 0, ""}, "rank 0 could not use the results file");
  }
  if (cluster.rank() != 0) {
    records = file.load(/*repair=*/false);
    file.open_for_append();
  }
  std::int64_t resumed = 0;
  for (std::size_t j = 0; j < u.size(); ++j) {
    const auto it = records.find(keys[u.first_index[j]]);
    if (it != records.end()) {
      results[j] = it->second;
      ++resumed;
    }
  }
  return resumed;
}

// Threads for `pending` jobs: options.num_threads, or the cores shared by this node's ranks.
int thread_count(const RunnerOptions& options, const Cluster& cluster, std::size_t pending) {
  int threads = options.num_threads;
  if (threads <= 0) {
    const int hw = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
    threads = std::max(1, hw / std::max(1, cluster.local_size()));
  }
  return std::max(1, std::min<int>(threads, static_cast<int>(pending)));
}

// Runs this rank's pending jobs on `threads` threads, each result appended to the file and kept
// in `results`. The first failure (lowest job) stops the rest and is returned.
std::exception_ptr run_pending(const std::vector<std::size_t>& pending, int threads,
                               const std::vector<std::string>& keys, const UniqueKeys& u,
                               const JobFn& job, ResultsFile* file, ProgressBar& bar,
                               std::vector<std::optional<std::string>>& results) {
  std::atomic<std::size_t> next{0};
  std::atomic<bool> stop{false};
  std::mutex error_mu;
  std::exception_ptr error;
  std::size_t error_unique = u.size();
  auto worker = [&] {
    for (;;) {
      if (stop.load()) return;
      const std::size_t p = next.fetch_add(1);
      if (p >= pending.size()) return;
      const std::size_t j = pending[p];
      try {
        std::string out = job(u.first_index[j]);
        if (out.find('\n') != std::string::npos || !nlohmann::json::accept(out)) {
          throw Error("internal: sweep job " + std::to_string(u.first_index[j]) +
                      " returned a result that is not one line of JSON");
        }
        if (file) file->append(keys[u.first_index[j]], out);
        results[j] = std::move(out);
        bar.tick();
      } catch (...) {
        std::lock_guard<std::mutex> lock(error_mu);
        if (!error || j < error_unique) {
          error = std::current_exception();
          error_unique = j;
        }
        stop.store(true);
      }
    }
  };
  std::vector<std::thread> pool;
  for (int t = 1; t < threads; ++t) pool.emplace_back(worker);
  worker();
  for (auto& t : pool) t.join();
  return error;
}

}  // namespace

std::vector<std::string> run_sweep(const std::vector<std::string>& keys, const JobFn& job,
                                   const RunnerOptions& options, SweepStats* stats) {
  const SingleProcess single;
  const Cluster& cluster = options.cluster ? *options.cluster : single;
  const int rank = cluster.rank();
  const int size = cluster.size();
  const UniqueKeys u = unique_keys(keys);
  const std::size_t num_unique = u.size();
  std::vector<std::optional<std::string>> results(num_unique);

  std::optional<ResultsFile> file;
  std::int64_t num_resumed = 0;
  if (!options.results_path.empty()) {
    file.emplace(options.results_path);
    num_resumed = resume_from(*file, cluster, keys, u, results);
  }

  // This rank's share and what of it is left to run.
  std::vector<std::size_t> pending;
  std::int64_t share = 0;
  for (std::size_t j = static_cast<std::size_t>(rank); j < num_unique;
       j += static_cast<std::size_t>(size)) {
    ++share;
    if (!results[j]) pending.push_back(j);
  }
  const int threads = thread_count(options, cluster, pending.size());
  std::exception_ptr error;
  {
    ProgressBar bar(options.progress_label, share,
                    share - static_cast<std::int64_t>(pending.size()),
                    options.progress && rank == 0);
    error = run_pending(pending, threads, keys, u, job, file ? &*file : nullptr, bar, results);
  }
  if (!cluster.all_ok(error == nullptr)) {
    if (error) std::rethrow_exception(error);
    throw Error("the sweep failed on another MPI rank (see its message)");
  }

  if (stats) {
    stats->num_jobs = static_cast<std::int64_t>(keys.size());
    stats->num_unique = static_cast<std::int64_t>(num_unique);
    stats->num_resumed = num_resumed;
    stats->num_run = static_cast<std::int64_t>(pending.size());
    stats->num_threads = threads;
    stats->num_ranks = size;
  }

  if (size > 1) {
    std::vector<std::pair<std::size_t, const std::string*>> mine;
    for (std::size_t j = static_cast<std::size_t>(rank); j < num_unique;
         j += static_cast<std::size_t>(size)) {
      mine.emplace_back(j, &*results[j]);
    }
    const std::vector<std::string> gathered = cluster.gather_at_root(pack(mine));
    if (rank != 0) return {};
    for (int r = 1; r < size; ++r) unpack(gathered[static_cast<std::size_t>(r)], results);
  }

  std::vector<std::string> out(keys.size());
  for (std::size_t i = 0; i < keys.size(); ++i) {
    const auto& r = results[u.unique_of_index[i]];
    if (!r) throw Error("internal: sweep job " + std::to_string(i) + " has no result");
    out[i] = *r;
  }
  return out;
}

}  // namespace kvsim::plan
