#pragma once
// The one progress renderer of long work (simulate, compare, plan): a status line on stderr,
// redrawn in place ("\r", then ESC[K clears what a longer earlier line left) at most every
// 100 ms, and only when enabled (callers pass true only when stderr is a terminal). At the end
// the line is either erased (a run's progress, before its report) or kept with a newline (the
// plan's bar). Thread-safe.

#include <chrono>
#include <functional>
#include <mutex>
#include <string>

namespace kvsim {

class ProgressLine {
 public:
  enum class AtEnd { kErase, kKeep };
  // `text` gives the line for the seconds since construction; called only when drawing.
  using Text = std::function<std::string(double elapsed_s)>;

  ProgressLine(bool enabled, AtEnd at_end);
  ~ProgressLine();  // finish() without a last text: erases a shown line (kErase) or ends it
  ProgressLine(const ProgressLine&) = delete;
  ProgressLine& operator=(const ProgressLine&) = delete;

  bool enabled() const { return enabled_; }
  // Draws text() when nothing was drawn yet, when 100 ms passed since the last draw, or `force`.
  void update(const Text& text, bool force = false);
  // A last draw of `text` (when given and enabled), then the end: the line erased (kErase) or a
  // newline (kKeep). Later updates and finishes draw nothing.
  void finish(const Text& text = nullptr);

 private:
  void draw(const Text& text, std::chrono::steady_clock::time_point now);

  const bool enabled_;
  const AtEnd at_end_;
  const std::chrono::steady_clock::time_point start_;
  std::chrono::steady_clock::time_point last_draw_;
  bool shown_ = false;
  bool finished_ = false;
  std::mutex mu_;
};

}  // namespace kvsim
