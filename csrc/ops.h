// Every op family of the core in one include (the C++ frontend uses this).
#pragma once
#include "generator.h"
#include "ops/elementwise.h"
#include "ops/factory.h"
#include "ops/index.h"
#include "ops/indexing.h"
#include "ops/linalg.h"
#include "ops/out.h"
#include "ops/reduce.h"
#include "allocator.h"
#include "autograd.h"
#include "parallel.h"
#include "tensor.h"
