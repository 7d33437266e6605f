import { describeHostileInput } from './support/hostile-input';

jest.setTimeout(240_000);

// Embedded defaults (PGlite): the same checks with a shorter fuzz run.
describeHostileInput('embedded', 1000);
