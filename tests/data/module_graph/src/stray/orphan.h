// A folder under src/ that module_graph.cmake does not list.
#pragma once
