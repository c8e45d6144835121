// Catch2 2 needs a translation unit that defines main; Catch2 3 links one.
#if defined(FASTT_CATCH2_V2)
#define CATCH_CONFIG_MAIN
#endif
#include "catch.h"
