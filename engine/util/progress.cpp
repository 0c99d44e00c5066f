#include "engine/util/progress.hpp"

#include <string>

namespace tissue {

namespace {
std::string format_duration(double s) {
  if (!(s >= 0.0) || s > 1e7) return "--:--";
  const auto total = static_cast<long long>(s + 0.5);
  char buf[32];
  if (total >= 3600)
    std::snprintf(buf, sizeof buf, "%lld:%02lld:%02lld", total / 3600, (total / 60) % 60, total % 60);
  else
    std::snprintf(buf, sizeof buf, "%02lld:%02lld", total / 60, total % 60);
  return buf;
}
}  // namespace

Progress::Progress(std::int64_t total, bool terminal, std::FILE* out)
    : total_(total),
      terminal_(terminal),
      out_(out),
      start_(std::chrono::steady_clock::now()),
      last_draw_(start_) {}

double Progress::elapsed() const {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
}

void Progress::update(std::int64_t done) {
  if (terminal_) {
    const auto now = std::chrono::steady_clock::now();
    if (now - last_draw_ < std::chrono::milliseconds(200) && done < total_) return;
    last_draw_ = now;
    draw(done, false);
  } else {
    // in double: 10 * done would overflow for step counts near the int64 limit
    const int decile =
        total_ > 0 ? static_cast<int>(10.0 * static_cast<double>(done) / static_cast<double>(total_)) : 10;
    const auto now = std::chrono::steady_clock::now();
    if (decile == last_decile_ && now - last_draw_ < log_interval_) return;
    last_decile_ = decile;
    last_draw_ = now;
    draw(done, false);
  }
}

void Progress::finish(std::int64_t done) {
  draw(done, true);
}

void Progress::draw(std::int64_t done, bool final) {
  const double t = elapsed();
  const double rate = t > 0.0 ? static_cast<double>(done) / t : 0.0;
  const double eta = rate > 0.0 ? static_cast<double>(total_ - done) / rate : -1.0;
  const double frac = total_ > 0 ? static_cast<double>(done) / static_cast<double>(total_) : 1.0;
  if (terminal_) {
    constexpr int width = 30;
    const int filled = static_cast<int>(frac * width);
    std::string bar(static_cast<std::size_t>(filled), '#');
    bar.resize(width, '.');
    std::fprintf(out_, "\r[%s] %5.1f%%  step %lld/%lld  %.0f steps/s  %s %s", bar.c_str(), 100.0 * frac,
                 static_cast<long long>(done), static_cast<long long>(total_), rate, final ? "took" : "ETA",
                 format_duration(final ? t : eta).c_str());
    if (final) std::fputc('\n', out_);
  } else {
    std::fprintf(out_, "step %lld/%lld (%.0f%%), %.0f steps/s, %s %s\n", static_cast<long long>(done),
                 static_cast<long long>(total_), 100.0 * frac, rate, final ? "took" : "ETA",
                 format_duration(final ? t : eta).c_str());
  }
  std::fflush(out_);
}

}  // namespace tissue
