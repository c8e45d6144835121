// One include for Catch2 2 (Debian 12) and Catch2 3 (Debian 13, the GPU
// machine's image): version 3 moved Approx into namespace Catch.
#pragma once
#if defined(FASTT_CATCH2_V3)
#include <catch2/catch_all.hpp>
using Catch::Approx;
#else
#include <catch2/catch.hpp>
#endif
