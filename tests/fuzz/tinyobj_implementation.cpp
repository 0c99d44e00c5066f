// tinyobjloader's implementation, compiled into the fuzz build (tests/fuzz/CMakeLists.txt) in place of
// Debian's shared library, so that libFuzzer's coverage and the sanitizers reach into the OBJ parser.
#define TINYOBJLOADER_IMPLEMENTATION
#include <tiny_obj_loader.h>
