#include "engine/exec/recording.hpp"

#include <stdexcept>
#include <utility>

#include "engine/exec/backend.hpp"

#if defined(TISSUE_BACKEND_CUDA)
#include "cuda/runtime.hpp"
#endif

namespace tissue::exec {

Recording::~Recording() {
#if defined(TISSUE_BACKEND_CUDA)
  cuda::destroy_graph(graph_);
#endif
}

void Recording::record(std::function<void()> work) {
#if defined(TISSUE_BACKEND_CUDA)
  cuda::destroy_graph(graph_);
  graph_ = nullptr;
  if (backend() == Backend::cuda) {
    work_ = nullptr;
    cuda::begin_capture();
    try {
      work();
    } catch (...) {
      cuda::destroy_graph(cuda::end_capture());
      throw;
    }
    graph_ = cuda::end_capture();
    return;
  }
#endif
  work_ = std::move(work);
}

void Recording::replay() {
#if defined(TISSUE_BACKEND_CUDA)
  if (graph_) {
    cuda::launch_graph(graph_);
    return;
  }
#endif
  if (!work_) throw std::logic_error("Recording::replay() before record()");
  work_();
}

}  // namespace tissue::exec
