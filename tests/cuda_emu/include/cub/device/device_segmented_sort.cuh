// CPU emulation of CUB (tests/cuda_emu/include/cub/emu_cub.h).
#pragma once
#include "cub/emu_cub.h"
