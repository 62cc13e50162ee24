// nvcc's entry to the kernels, which live in all.h so that Go's build
// cache sees their changes when it compiles the emulator (emu.cc).
#include "all.h"
