// Every page on a 390 × 844 phone (test/helpers/accessibility-tour.ts).
import { accessibilityTourAt } from '../helpers/accessibility-tour.ts';

accessibilityTourAt({ label: 'phone', width: 390, height: 844 });
