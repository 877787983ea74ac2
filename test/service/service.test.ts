/** The service contract with the answers made in the serving thread (createService's default, for embedding). */
import { serviceContract } from './serviceContract';

serviceContract(0);
