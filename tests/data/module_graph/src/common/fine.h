// Allowed: a module includes its own headers and the C++ library freely.
#pragma once

#include <string>

#include "common/other.h"
