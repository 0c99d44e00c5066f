#pragma once
/// @file paraview_render.hpp
/// `tissue render RUN_DIR OUT.png`: the last snapshot of a run directory as its view.pvsm shows it
/// (engine/io/paraview_state.hpp), rendered by ParaView's pvbatch (or pvpython) running a Python script that
/// is compiled into tissue and written to a temporary file for the run. Without a display (DISPLAY unset),
/// ParaView runs under `xvfb-run -a` where that is installed, else with --force-offscreen-rendering.

#include <filesystem>
#include <stdexcept>
#include <string>

namespace tissue::tools {

/// ParaView was stopped by SIGINT, SIGTERM or SIGHUP (tissue itself ignores them while ParaView renders, so
/// that it can remove its temporary files): the command then ends by the same signal (exit 128 + N).
class RenderInterrupted : public std::runtime_error {
 public:
  explicit RenderInterrupted(int signo) : std::runtime_error("rendering interrupted"), signo_(signo) {}
  int signo() const { return signo_; }

 private:
  int signo_;
};

/// What to render.
struct RenderRequest {
  std::filesystem::path run_dir;   ///< a run directory holding view.pvsm
  std::filesystem::path png;       ///< the image to write (.png); its directory must exist
  int width = 1280, height = 960;  ///< image size [pixels], each 1..16384
};

/// Parses "WxH" (e.g. "1280x960") into width and height. @throws InputError unless both are integers in
/// 1..16384.
void parse_image_size(const std::string& text, int& width, int& height);

/// The ParaView program render() runs: $TISSUE_PVBATCH when set (a path, or a name looked up on PATH), else
/// pvbatch, else pvpython from PATH. @throws std::runtime_error (one line) when there is none.
std::filesystem::path find_paraview();

/// Renders the last snapshot of request.run_dir to request.png: loads view.pvsm with the run directory as
/// working directory (its file names are relative to it), goes to the last time step, shows a colour legend
/// per coloured series, fits the camera to the data (keeping the state's view direction) and saves the image.
/// @return a line saying what was written (the image, its size, the time shown).
/// @throws InputError (exit 2) for a run directory that is missing or holds no view.pvsm, an image name that
/// is not .png or whose directory does not exist; std::runtime_error (exit 1) when ParaView is not installed
/// or fails (the message carries ParaView's own error line); RenderInterrupted when a signal stopped it.
std::string render(const RenderRequest& request);

/// The Python script render() runs: `pvbatch SCRIPT RUN_DIR OUT_PNG WIDTH HEIGHT`.
const char* render_script();

}  // namespace tissue::tools
