// The twocs program: everything happens in twocs::cli::run_cli.
#include <iostream>

#include <twocs/cli/app.hpp>

int main(int argc, char** argv) { return twocs::cli::run_cli(argc, argv, std::cout, std::cerr); }
