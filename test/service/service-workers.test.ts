/** The service contract with the answers made in a worker thread, as `ctxlens serve` runs. */
import { serviceContract } from './serviceContract';

serviceContract(1);
