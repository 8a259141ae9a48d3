/* One call: main and nothing else. What a tracer costs when there is
 * nothing to trace: start-up and tear-down, measured by bench/b-func-cost.sh.
 * expect: main=1 */
int main(void)
{
	return 0;
}
